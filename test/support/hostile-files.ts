import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { familyRssMb } from '../../bench/lib/proc.js';

export { multipartFile, pdfBomb, unclosedTagsHtml } from '../../bench/lib/hostile-files.js';

export interface Watched<T> {
  result: T;
  seconds: number;
  /** Slowest `GET /health/` answer while `work` ran (polled every 20 ms). */
  maxHealthMs: number;
  /** Longest stall of this process's event loop while `work` ran. */
  maxLoopDelayMs: number;
  /** Resident memory of this process and its workers: before, and the highest seen while `work` ran. */
  baseRssMb: number;
  peakRssMb: number;
}

/** Runs `work` against a service in this process and measures what it does to everyone else. */
export async function watchService<T>(server: Server, work: () => Promise<T>): Promise<Watched<T>> {
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/health/`;
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  let running = true;
  let maxHealthMs = 0;
  const baseRssMb = familyRssMb(process.pid);
  let peakRssMb = baseRssMb;
  const poller = (async () => {
    while (running) {
      const started = performance.now();
      const response = await fetch(url);
      await response.arrayBuffer();
      maxHealthMs = Math.max(maxHealthMs, performance.now() - started);
      peakRssMb = Math.max(peakRssMb, familyRssMb(process.pid));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  const started = performance.now();
  try {
    const result = await work();
    return {
      result,
      seconds: (performance.now() - started) / 1000,
      maxHealthMs,
      maxLoopDelayMs: delay.max / 1e6,
      baseRssMb,
      peakRssMb,
    };
  } finally {
    running = false;
    await poller;
    delay.disable();
  }
}
