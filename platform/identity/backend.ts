/**
 * The identity backend: the kernel's hostname and (NIS) domain name, set by
 * the hostname controller from machine config.
 * @module
 */

/** The kernel limit for both names (__NEW_UTS_LEN). */
export const MAX_UTS_NAME = 64;

/**
 * Node identity in the caller's UTS namespace.
 *
 * Idempotence: setting a name to its current value succeeds and changes nothing.
 */
export interface IdentityBackend {
  hostname(): Promise<string>;
  /** @throws SysError EINVAL when longer than {@link MAX_UTS_NAME} bytes; EPERM without CAP_SYS_ADMIN. */
  setHostname(name: string): Promise<void>;
  domainname(): Promise<string>;
  /** @throws SysError EINVAL when longer than {@link MAX_UTS_NAME} bytes. */
  setDomainname(name: string): Promise<void>;
}
