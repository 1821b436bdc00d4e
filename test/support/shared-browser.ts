import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type BrowserServer, type LaunchOptions } from 'playwright-core';
import { chooseBrowser } from './chromium';

/**
 * One Chromium per Jest run, shared by every browser suite: launching one costs a second or two of
 * a core and about 150 MB, and fourteen files each launched their own. Each suite still gets its own
 * contexts (fresh cookies, storage and pages), which is all the isolation a test relies on.
 *
 * The run's global set-up (global-setup.ts) starts a small broker on loopback and names it in this
 * variable, which the test workers inherit. The browser is launched on the first request to the
 * broker, so a run without a browser test launches none; the global teardown closes it.
 */
export const BROWSER_BROKER = 'CHECKOUT_TEST_BROWSER_BROKER';

/** Headless, without background traffic, the browser chooseBrowser() names. */
export function launchOptions(): LaunchOptions {
  const chosen = chooseBrowser();
  return {
    executablePath: chosen.executablePath,
    env: { ...process.env, ...chosen.env },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  };
}

interface Broker {
  readonly http: Server;
  launched?: Promise<BrowserServer>;
}

// The set-up and the teardown run in Jest's main process; the handle is kept where both find it.
const holder = globalThis as { checkoutBrowserBroker?: Broker };

/** Starts the broker; resolves with its URL (a GET answers the browser's WebSocket endpoint, or 500 and why there is none). */
export async function startBrowserBroker(): Promise<string> {
  const broker: Broker = {
    http: createServer((_req, res) => {
      broker.launched ??= Promise.resolve().then(() => chromium.launchServer(launchOptions()));
      broker.launched.then(
        (server) => res.writeHead(200, { 'content-type': 'text/plain' }).end(server.wsEndpoint()),
        (error: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(error.message),
      );
    }),
  };
  await new Promise<void>((resolve, reject) => {
    broker.http.once('error', reject);
    broker.http.listen(0, '127.0.0.1', () => resolve());
  });
  // Idle workers' keep-alive sockets must not hold the run open.
  broker.http.unref();
  holder.checkoutBrowserBroker = broker;
  return `http://127.0.0.1:${(broker.http.address() as AddressInfo).port}`;
}

/** Closes the browser, if one was launched, and the broker. */
export async function stopBrowserBroker(): Promise<void> {
  const broker = holder.checkoutBrowserBroker;
  if (!broker) return;
  holder.checkoutBrowserBroker = undefined;
  broker.http.closeAllConnections();
  broker.http.close();
  const server = await broker.launched?.catch(() => undefined);
  await server?.close();
}

/** The shared browser's WebSocket endpoint, launched on the first ask; undefined outside a Jest run. */
export async function sharedBrowserEndpoint(): Promise<string | undefined> {
  const url = process.env[BROWSER_BROKER];
  if (!url) return undefined;
  const res = await fetch(url);
  const text = await res.text();
  if (!res.ok) throw new Error(text);
  return text;
}
