/**
 * NativeIdentityBackend: sethostname/setdomainname/uname through native-ops.
 * @module
 */
import { loadNative } from "../../native-ops/mod.ts";
import type { IdentityBackend } from "./backend.ts";

interface IdentityNative {
  uname(): { nodename: string; domainname: string };
  setHostname(name: string): void;
  setDomainname(name: string): void;
}

/** Identity of the caller's UTS namespace. */
export class NativeIdentityBackend implements IdentityBackend {
  readonly #native: IdentityNative;
  constructor(native: IdentityNative = loadNative() as unknown as IdentityNative) {
    this.#native = native;
  }
  hostname(): Promise<string> {
    return this.#call(() => this.#native.uname().nodename);
  }
  setHostname(name: string): Promise<void> {
    return this.#call(() => this.#native.setHostname(name));
  }
  domainname(): Promise<string> {
    return this.#call(() => this.#native.uname().domainname);
  }
  setDomainname(name: string): Promise<void> {
    return this.#call(() => this.#native.setDomainname(name));
  }
  #call<T>(fn: () => T): Promise<T> {
    try {
      return Promise.resolve(fn());
    } catch (e) {
      return Promise.reject(e);
    }
  }
}
