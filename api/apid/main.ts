/**
 * apid: the API front end as its own process. Reads the CA certificate and its
 * server pair, binds the API port, drops the Deno permissions it no longer
 * needs, and forwards every call to machined over the Unix socket. It holds no
 * CA key: machined renews the server certificate and restarts apid. Prints one
 * JSON line `{"apid":"ready",...}` on stdout
 * once serving, for the supervisor. Exits 0 on SIGTERM/SIGINT or when its parent
 * (machined) is gone, 2 on bad flags.
 *
 * Run by api/apid/supervisor.ts; see apidPermissionFlags for its flags.
 */
import { parseApidArgs } from "./apid_options.ts";
import { startApidServer } from "./apid_server.ts";
import { loadApidPki } from "./load_apid_pki.ts";
import { dropPrivileges } from "./privileges.ts";
import { watchParent } from "./parent_watch.ts";

/** Runs apid with `args` (its flags); resolves with the exit code. */
export async function main(args: readonly string[] = Deno.args): Promise<number> {
  let options;
  try {
    options = parseApidArgs(args);
  } catch (e) {
    console.error(`apid: ${(e as Error).message}`);
    return 2;
  }
  const pki = await loadApidPki(options.pkiDir);
  const server = await startApidServer({
    ca: pki.ca,
    maintenance: pki.maintenance,
    server: pki.server,
    socketPath: options.socketPath,
    hostname: options.hostname,
    port: options.port,
    readMaxBytes: options.readMaxBytes,
    writeMaxBytes: options.writeMaxBytes,
    maxConcurrentStreams: options.maxConcurrentStreams,
  });
  const privileges = await dropPrivileges(options);
  // Listen before saying ready: a supervisor may send SIGTERM as soon as it reads the line.
  const { promise: stopped, resolve } = Promise.withResolvers<string>();
  const stop = (signal: string) => () => resolve(signal);
  Deno.addSignalListener("SIGTERM", stop("SIGTERM"));
  Deno.addSignalListener("SIGINT", stop("SIGINT"));
  console.log(JSON.stringify({
    apid: "ready",
    pid: Deno.pid,
    port: server.port,
    hostname: server.hostname,
    ...(pki.maintenance ? { maintenance: true } : {}),
    revoked: privileges.revoked,
    kept: privileges.kept,
    unscoped: privileges.unscoped,
  }));

  // machined gone (re-parented): stop rather than serve with no upstream.
  const stopWatching = watchParent(stop("parent exit"));
  const signal = await stopped;
  stopWatching();
  await Promise.race([server.close(), new Promise((r) => setTimeout(r, 2000))]);
  console.error(`apid: stopped on ${signal}`);
  return 0;
}

if (import.meta.main) Deno.exit(await main());
