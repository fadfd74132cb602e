/**
 * FakeIdentityBackend: hostname and domain name in memory, with the kernel's
 * length limit and a FaultInjector (ops `sethostname`, `setdomainname`).
 * @module
 */
import { errnoValue, SysError } from "../../native-ops/mod.ts";
import { FaultInjector } from "../mod.ts";
import { type IdentityBackend, MAX_UTS_NAME } from "./backend.ts";

/** The in-memory identity backend. */
export class FakeIdentityBackend implements IdentityBackend {
  readonly faults = new FaultInjector();
  /** Starts as a fresh kernel reports it. */
  constructor(public currentHostname = "localhost", public currentDomainname = "(none)") {}

  hostname(): Promise<string> {
    return Promise.resolve(this.currentHostname);
  }
  domainname(): Promise<string> {
    return Promise.resolve(this.currentDomainname);
  }
  setHostname(name: string): Promise<void> {
    return this.#set("sethostname", name, (n) => this.currentHostname = n);
  }
  setDomainname(name: string): Promise<void> {
    return this.#set("setdomainname", name, (n) => this.currentDomainname = n);
  }
  #set(op: string, name: string, apply: (n: string) => void): Promise<void> {
    try {
      this.faults.check(op, [name]);
      if (new TextEncoder().encode(name).length > MAX_UTS_NAME || name.includes("\0")) {
        throw new SysError(op, errnoValue("EINVAL"), name);
      }
      apply(name);
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(e);
    }
  }
}
