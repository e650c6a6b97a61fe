/** Ports for tests that need an address with nothing behind it. */
import * as net from "node:net"

/** A free port on 127.0.0.1 with nothing listening on it (taken, then released). */
export const unusedPort = (): Promise<number> =>
  new Promise<number>((resolve) => {
    const server = net.createServer()
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

/** Whether something accepts connections on 127.0.0.1:port. */
export const listening = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })
