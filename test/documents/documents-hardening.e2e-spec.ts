import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { childrenOf } from '../../bench/lib/proc.js';
import { EXTRACTION_STARVED_DETAIL } from '../../src/documents/extraction/document-extractor.js';
import { UploadGate } from '../../src/documents/upload-gate.js';
import type { AddressInfo } from 'node:net';
import { type SignedInUser, signUp, startTestApp, type TestApp } from '../support/app.js';
import { until } from '../support/core.js';
import { multipartFile, pdfBomb, unclosedTagsHtml, type Watched, watchService } from '../support/hostile-files.js';

// What one user's upload may cost everyone else on the instance. Before the fix these attacks stalled
// the event loop for 5.5 s and more. Measured here in the test process, whose client and GC share the
// loop, on a 2-core machine shared with other test runs: 20 to 230 ms, and up to 400 ms while the full
// suite runs another file beside it. The bound is well under the old stalls and above that noise; the
// built service alone stays under 100 ms (npm run bench -- extraction, and the built-service test).
const MAX_STALL_MS = 1000;

/** HARDENING_FIGURES=1 prints what each attack cost. */
function report(name: string, watched: Watched<{ status: number }>) {
  if (!process.env.HARDENING_FIGURES) return;
  const { result, seconds, maxHealthMs, maxLoopDelayMs, baseRssMb, peakRssMb } = watched;
  const round = (n: number) => Math.round(n);
  console.log(
    `${name}: ${result.status} in ${seconds.toFixed(2)} s; /health/ max ${round(maxHealthMs)} ms; event loop max stall ${round(maxLoopDelayMs)} ms; ` +
      `RSS (process and workers) ${round(baseRssMb)} -> peak ${round(peakRssMb)} MB`,
  );
}

describe('hostile uploads (issue 13)', () => {
  let test: TestApp;
  let user: SignedInUser;

  beforeAll(async () => {
    test = await startTestApp({ MAX_UPLOADS_IN_FLIGHT: '2' });
    user = await signUp(test);
  });
  afterAll(() => test.close());

  const upload = (name: string, content: Buffer) =>
    test.http().post('/v1/documents/').set(user.auth).attach('file', content, name);
  /** An upload whose body is built before it is sent, so that the client adds no work to the measured event loop. */
  const send = async (
    name: string,
    content: Buffer,
  ): Promise<{ status: number; body: { detail?: string; chunk_count?: number } }> => {
    const { body, contentType } = multipartFile(name, content);
    const url = `http://127.0.0.1:${(test.server.address() as AddressInfo).port}/v1/documents/`;
    const response = await fetch(url, { method: 'POST', headers: { ...user.auth, 'Content-Type': contentType }, body });
    return { status: response.status, body: (await response.json()) as { detail?: string; chunk_count?: number } };
  };

  it('answers 400 quickly to HTML nested 400,000 deep, and /health/ stays fast meanwhile', async () => {
    await upload('warm.txt', Buffer.from('Starts an extraction worker.')).expect(201);
    const html = unclosedTagsHtml(400_000); // 1.2 MB: about 40 s of parsing before the depth cap
    const watched = await watchService(test.server, () => send('deep.html', html));
    report('deep.html', watched);
    expect(watched.result.status).toBe(400);
    expect(watched.result.body.detail).toBe(
      'file: The HTML nests elements more than 512 deep (unclosed tags?); it is refused.',
    );
    // 0.6-0.8 s alone; the worker runs at niceness 10, so beside the other test worker on two busy
    // cores it took 4.2 s once. Uncapped, the parse takes about 40 s.
    expect(watched.seconds).toBeLessThan(10);
    expect(watched.maxHealthMs).toBeLessThan(MAX_STALL_MS);
    expect(watched.maxLoopDelayMs).toBeLessThan(MAX_STALL_MS);
  });

  it('still reads HTML nested deeply but within the cap', async () => {
    const html = `${'<div>'.repeat(500)}Deep but fine.${'</div>'.repeat(500)}`;
    const response = await upload('nested.html', Buffer.from(html)).expect(201);
    expect(response.body.content_type).toBe('text/html');
  });

  it('reads a 5 MB HTML page of 50,000 paragraphs within the worker heap limit', async () => {
    // Its text pieces, each a regex replace's result, were kept as V8 ropes 13 times their size until
    // the end: the page took more than the 96 MB heap (refused as too big), on Node 24 from about 4 MB.
    const paragraph = 'The ingest worker restarts when the queue backs up, and failover moves traffic to the replica. ';
    const html = Buffer.from(`<html><body>${`<p>${paragraph}</p>\n`.repeat(50_000)}</body></html>`);
    expect(html.length).toBeGreaterThan(5_000_000);
    const response = await send('large.html', html);
    expect(response.status).toBe(201);
    expect(response.body.chunk_count).toBeGreaterThan(1000);
  }, 120_000);

  it('refuses a PDF that inflates to 300 MB, with memory bounded and /health/ fast', async () => {
    const bomb = await pdfBomb(300 * 1024 * 1024);
    expect(bomb.length).toBeLessThan(400 * 1024);
    const watched = await watchService(test.server, () => send('bomb.pdf', bomb));
    report('bomb.pdf', watched);
    expect(watched.result.status).toBe(400);
    expect(watched.result.body.detail).toBe(
      'file: The PDF decompresses to more than 64 MB; it is refused as a possible decompression bomb.',
    );
    // This Jest process (app and tests together) and its extraction workers; before: 714 MB for the
    // service alone. The worker is stopped past 96 + 128 MB resident (+ 64 for the swc hooks that run
    // it from the sources here); growth seen: 269 MB on Node 20, 253 on Node 24.
    expect(watched.peakRssMb - watched.baseRssMb).toBeLessThan(350);
    expect(watched.maxHealthMs).toBeLessThan(MAX_STALL_MS);
  }, 60_000);

  it('refuses a PDF whose text makes pdf.js grow its heap past the cap, with memory bounded', async () => {
    // 20 MB of show-text operators (within the decode budget): pdf.js went past 1.2 GB on it, in one
    // synchronous run. The worker's heap cap (96 MB) or its resident limit (see above) stops it.
    const bomb = await pdfBomb(20 * 1024 * 1024, '(Boom boom) Tj T*\n', 'BT /F1 12 Tf 14 TL\n');
    const watched = await watchService(test.server, () => send('chatty.pdf', bomb));
    report('chatty.pdf', watched);
    expect(watched.result.status).toBe(400);
    expect(watched.result.body.detail).toBe(
      'file: Reading the document needs more memory than one document may use; it is refused. Split it into smaller files.',
    );
    // Growth measured: 290-293 MB on Node 20 and 24 (before the resident limit: 380 and 406-460, V8
    // overshooting its heap cap within pdf.js's synchronous run); without the cap it passed 1.2 GB.
    expect(watched.peakRssMb - watched.baseRssMb).toBeLessThan(350);
    expect(watched.maxHealthMs).toBeLessThan(MAX_STALL_MS);
  }, 60_000);

  it('stores 2.5 MB of "Ab. " without stalling the event loop', async () => {
    // 650,000 sentences: about 1.5 s of chunking on the event loop before (10 MB took 6.2 s). Not 10 MB
    // here: storing its 10,000 chunks outlasts the 15 s query timeout on a loaded machine (a 503).
    const text = Buffer.from('Ab. '.repeat(650_000));
    const watched = await watchService(test.server, () => send('ab.txt', text));
    report('ab.txt', watched);
    expect(watched.result.status).toBe(201);
    expect(watched.result.body.chunk_count).toBeGreaterThan(2000);
    expect(watched.maxHealthMs).toBeLessThan(MAX_STALL_MS);
    expect(watched.maxLoopDelayMs).toBeLessThan(MAX_STALL_MS);
  }, 120_000);

  it('chunks long JSON content off the event loop too, with the same chunks', async () => {
    const content = 'Ab. '.repeat(200_000); // 800 KB, under MAX_BODY_BYTES
    const watched = await watchService(test.server, () =>
      test.http().post('/v1/documents/').set(user.auth).send({ title: 'ab', content }),
    );
    expect(watched.result.status).toBe(201);
    expect(watched.maxLoopDelayMs).toBeLessThan(MAX_STALL_MS);
  }, 60_000);

  it('answers 503 with a detail to uploads beyond MAX_UPLOADS_IN_FLIGHT, and frees the places afterwards', async () => {
    // Two uploads whose bodies are still arriving hold both places.
    const port = (test.server.address() as AddressInfo).port;
    const held = [0, 1].map(() => {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => {});
      socket.write(
        `POST /v1/documents/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${user.auth.Authorization}\r\n` +
          'Content-Type: multipart/form-data; boundary=XYZ\r\nContent-Length: 1000000\r\n\r\n--XYZ\r\n',
      );
      return socket;
    });
    // Each takes its place once authenticated, which a busy machine may take a while to do.
    await until(() => test.app.get(UploadGate).held === 2);
    const refused = await upload('third.txt', Buffer.from('One too many.')).expect(503);
    expect(refused.body).toEqual({
      detail: 'Too many uploads are being processed right now (at most 2 at once); retry in a few seconds.',
    });
    expect(refused.headers['retry-after']).toBe('2');
    // JSON documents do not take a place.
    await test
      .http()
      .post('/v1/documents/')
      .set(user.auth)
      .send({ title: 'j', content: 'JSON still works.' })
      .expect(201);

    held.forEach((socket) => socket.destroy());
    await until(() => test.app.get(UploadGate).held === 0);
    await upload('fourth.txt', Buffer.from('Room again.')).expect(201);
  });

  it('frees the place of an upload whose client left before it was read', async () => {
    // Whole uploads sent and the connection closed at once: the response is over before the upload is
    // read, and its place must not be held for ever.
    const port = (test.server.address() as AddressInfo).port;
    const { body, contentType } = multipartFile('gone.txt', Buffer.from('Nobody waits for this.'));
    const request = Buffer.concat([
      Buffer.from(
        `POST /v1/documents/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${user.auth.Authorization}\r\n` +
          `Content-Type: ${contentType}\r\nContent-Length: ${body.length}\r\n\r\n`,
      ),
      body,
    ]);
    for (let i = 0; i < 6; i++) {
      const socket = connect(port, '127.0.0.1', () => socket.end(request, () => socket.destroy()));
      socket.on('error', () => {});
    }
    // Each is read and stored (or dropped) in its own time; then every place is free again.
    await new Promise((resolve) => setTimeout(resolve, 500));
    await until(() => test.app.get(UploadGate).held === 0, 30_000);
    const both = await Promise.all([
      upload('one.txt', Buffer.from('First of two.')),
      upload('two.txt', Buffer.from('Second of two.')),
    ]);
    expect(both.map((response) => response.status)).toEqual([201, 201]);
  }, 60_000);
});

/** A service with `env`, and an upload as one signed-up user. */
function serviceWith(env: Record<string, string>) {
  const context = {} as { test: TestApp; user: SignedInUser };
  beforeAll(async () => {
    context.test = await startTestApp(env);
    context.user = await signUp(context.test);
  });
  afterAll(() => context.test.close());
  return (name: string, content: Buffer) =>
    context.test.http().post('/v1/documents/').set(context.user.auth).attach('file', content, name);
}

describe('EXTRACTION_TIMEOUT_MS', () => {
  // Heap enough for the slow file, so that time is what stops it; wall-clock time enough for the worker
  // to use its CPU time even on a machine busy with other tests.
  const upload = serviceWith({
    EXTRACTION_TIMEOUT_MS: '500',
    EXTRACTION_WALL_TIMEOUT_MS: '60000',
    EXTRACTION_MEMORY_MB: '256',
  });

  it('refuses a file that takes longer to read, and the next upload works', async () => {
    await upload('warm.txt', Buffer.from('Starts the worker.')).expect(201);
    // 10 MB of short sentences: about 1.5 s of CPU to chunk on Node 20 and 24, three times the limit (10 MB
    // of HTML, which it was, now reads in under 1.5 s, and this file too came in under 1.5 s once in CI).
    const slow = Buffer.from('Ab. '.repeat(2_600_000));
    const response = await upload('slow.txt', slow).expect(400);
    expect(response.body.detail).toBe(
      'file: Reading the document took over 1 s; it is refused. Split it into smaller files.',
    );
    await upload('after.txt', Buffer.from('The pool replaced its worker.')).expect(201);
  }, 60_000);
});

describe('EXTRACTION_WALL_TIMEOUT_MS', () => {
  // A heap cap above what the worker holds when run from TypeScript under the test runner (on Node 24
  // more than the default 96 MB), so that the warmed-up worker is kept rather than replaced.
  const upload = serviceWith({
    EXTRACTION_TIMEOUT_MS: '1500',
    EXTRACTION_WALL_TIMEOUT_MS: '3000',
    EXTRACTION_MEMORY_MB: '256',
  });

  it('counts CPU time, not waiting: a worker starved of CPU gets the client a 503 to retry, not a refusal', async () => {
    /**
     * Uploads as a client retrying a 503 would, up to five times: on a machine this busy a fresh worker
     * (niced, started from TypeScript here) can miss the 3 s wall limit, which is the starved 503 again,
     * never a refusal. Answers the last status.
     */
    const uploadRetryingStarved = async (name: string, body: Buffer) => {
      let status = 0;
      for (let attempt = 0; attempt < 5 && status !== 201; attempt += 1) {
        const response = await upload(name, body);
        if (response.status !== 201) expect(response.body).toEqual({ detail: EXTRACTION_STARVED_DETAIL });
        status = response.status;
      }
      return status;
    };
    expect(await uploadRetryingStarved('warm.txt', Buffer.from('Starts the worker.'))).toBe(201);
    // Stopped, the worker gets no CPU at all, as on a machine busy with other work.
    const workers = extractionWorkers();
    expect(workers.length).toBeGreaterThan(0);
    for (const pid of workers) process.kill(pid, 'SIGSTOP');
    const response = await upload('fine.txt', Buffer.from('A small, ordinary file.')).expect(503);
    expect(response.body).toEqual({ detail: EXTRACTION_STARVED_DETAIL });
    // Its worker was replaced (a stopped process is still killed), so a retry is read.
    expect(await uploadRetryingStarved('fine.txt', Buffer.from('A small, ordinary file.'))).toBe(201);
  }, 90_000);
});

/** The extraction workers of this test process's services. */
function extractionWorkers(): number[] {
  return childrenOf(process.pid)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('extract.worker');
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe('EXTRACTION_MEMORY_MB', () => {
  const upload = serviceWith({ EXTRACTION_MEMORY_MB: '48' });

  it('refuses a file that needs more memory to read, and the service lives on', async () => {
    const response = await upload('lines.txt', Buffer.from('a\n'.repeat(5_000_000))).expect(400);
    expect(response.body.detail).toBe(
      'file: Reading the document needs more memory than one document may use; it is refused. Split it into smaller files.',
    );
    await upload('light.txt', Buffer.from('Still here.')).expect(201);
  }, 60_000);
});
