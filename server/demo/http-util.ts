/** Small node:http helpers shared by the demo servers. */
import { once } from 'node:events';
import { realpathSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export async function readBody(req: IncomingMessage, limit = 20 * 1024 * 1024): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      req.destroy();
      throw new Error('body too large');
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The body as JSON; undefined, once `refusal` is answered with a 400, when it is not JSON. */
export async function readJson(
  req: IncomingMessage,
  res: ServerResponse,
  refusal: unknown,
): Promise<unknown> {
  try {
    return JSON.parse(await readBody(req));
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
    sendJson(res, 400, refusal);
    return undefined;
  }
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

/** Listens on host:port (0 = ephemeral) and returns the bound port. */
export async function listen(server: Server, port: number, host: string): Promise<number> {
  server.listen(port, host);
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/** Closes the server and drops open (keep-alive or held) connections. */
export function closeServer(server: Server): Promise<void> {
  return new Promise<void>((ok) => {
    server.close(() => ok());
    server.closeAllConnections();
  });
}

/** True when the module at `moduleUrl` is the script node was started with. */
export function isMainModule(moduleUrl: string): boolean {
  if (!process.argv[1]) return false;
  try {
    return realpathSync(fileURLToPath(moduleUrl)) === realpathSync(resolve(process.argv[1]));
  } catch (e) {
    // argv[1] names no file (node -e, a REPL): not started as a script
    if ((e as { code?: unknown }).code !== 'ENOENT') throw e;
    return false;
  }
}

/** `--name value` from the command line. */
export function cliArg(name: string, argv = process.argv.slice(2)): string | undefined {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
}

/** The port used last time when it is free again (so frozen bindings of waiting work stay valid), else any. */
export async function stablePort<T>(
  saved: number | undefined,
  start: (port: number) => Promise<T>,
): Promise<T> {
  if (saved) {
    try {
      return await start(saved);
    } catch (e) {
      // taken by something else: fall through to an ephemeral port
      if ((e as { code?: unknown }).code !== 'EADDRINUSE') throw e;
    }
  }
  return start(0);
}
