import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP relay to a real server that a test can take away and give back: `cut` closes the port and
 * every open connection (what a stopped Redis looks like), `freeze` keeps connections open but
 * relays nothing until restored (a hung one), `restore` undoes either on the same port.
 */
export interface TcpProxy {
  port: number;
  cut(): Promise<void>;
  freeze(): void;
  restore(): Promise<void>;
  close(): Promise<void>;
  /** Client connections accepted so far (a frozen relay still accepts them). */
  readonly accepted: number;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let accepted = 0;
  let frozen = false;
  let held: (() => void)[] = [];

  const relay = (client: Socket) => {
    const upstream = connect(target.port, target.host);
    open.add(client);
    open.add(upstream);
    accepted += 1;
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    // Held while frozen and delivered on restore, in order, as a paused server would.
    const forward = (to: Socket) => (chunk: Buffer) => {
      if (frozen) held.push(() => to.write(chunk));
      else to.write(chunk);
    };
    client.on("data", forward(upstream));
    upstream.on("data", forward(client));
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
  };

  let server: Server = createServer(relay);
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        const address = server.address();
        resolve(typeof address === "object" && address ? address.port : port);
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of open) socket.destroy();
      open.clear();
      server.close(() => resolve());
    });

  const port = await listen(0);
  return {
    port,
    cut: stop,
    freeze() {
      frozen = true;
    },
    async restore() {
      frozen = false;
      const release = held;
      held = [];
      for (const write of release) write();
      if (!server.listening) {
        server = createServer(relay);
        await listen(port);
      }
    },
    close: stop,
    get accepted() {
      return accepted;
    },
  };
}
