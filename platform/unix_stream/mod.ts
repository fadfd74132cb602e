/**
 * Unix sockets as node streams, without node:net (whose pipe handle closes
 * each descriptor twice in Deno 2.9.3): what node:http2 speaks over between
 * machined and its edge, and to containerd.
 * @module
 */
export {
  connectUnixStream,
  listenUnixStream,
  UnixStream,
  type UnixStreamListener,
} from "./unix_stream.ts";
