/**
 * A TCP proxy for partitions (issue 14): put it between a worker and the engine, or a worker and a tool
 * server, and make the network fail the two ways it does:
 *
 *   cut()        every open connection is reset and new ones are refused at once (a peer that is gone)
 *   blackhole()  connections stay open but nothing passes either way, and new ones hang (a partition:
 *                packets dropped, no reset; the caller learns only from its own timeouts)
 *   restore()    traffic passes again; connections held by the blackhole are reset so callers reconnect
 *
 * Plain TCP, so it works for HTTP, keep-alive and WebSockets alike.
 */
import net from 'node:net';

export type ProxyMode = 'pass' | 'cut' | 'blackhole';

export interface TcpProxy {
  port: number;
  /** `http://127.0.0.1:<port>` */
  url: string;
  mode(): ProxyMode;
  cut(): void;
  blackhole(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host?: string; port: number }): Promise<TcpProxy> {
  const host = target.host ?? '127.0.0.1';
  let mode: ProxyMode = 'pass';
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket | null }>();

  const server = net.createServer((client) => {
    if (mode === 'cut') return void client.resetAndDestroy();
    const pair = { client, upstream: null as net.Socket | null };
    pairs.add(pair);
    const drop = () => {
      pairs.delete(pair);
      client.destroy();
      pair.upstream?.destroy();
    };
    client.on('error', drop);
    client.on('close', drop);
    if (mode === 'blackhole') {
      client.on('data', () => {}); // swallowed
      return;
    }
    const upstream = net.connect(target.port, host);
    pair.upstream = upstream;
    upstream.on('error', drop);
    upstream.on('close', drop);
    // Data is forwarded only while passing; in a blackhole it is read and dropped.
    client.on('data', (c) => {
      if (mode === 'pass') upstream.write(c);
    });
    upstream.on('data', (c) => {
      if (mode === 'pass') client.write(c);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const resetAll = () => {
    for (const p of [...pairs]) {
      p.client.resetAndDestroy();
      p.upstream?.destroy();
      pairs.delete(p);
    }
  };
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    mode: () => mode,
    cut() {
      mode = 'cut';
      resetAll();
    },
    blackhole() {
      mode = 'blackhole';
    },
    restore() {
      if (mode === 'blackhole') resetAll();
      mode = 'pass';
    },
    async close() {
      resetAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
