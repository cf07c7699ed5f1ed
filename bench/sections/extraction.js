/**
 * Hostile uploads (issue 13), one after another against the built service: for each, its answer and
 * time, the slowest `GET /health/` while it ran (polled every 20 ms by this separate process) and the
 * highest memory of the service and its extraction workers. Before the fix: 10 s, 5.5 s and 6.2 s
 * stalls and 714 MB.
 */
import { multipartFile, pdfBomb, unclosedTagsHtml } from '../lib/hostile-files.js';

export const description = 'hostile uploads: deep HTML, PDF bombs, 10 MB of tiny sentences; /health/ and RSS meanwhile';
export const explicitOnly = true;

export async function run(ctx) {
  const { baseUrl, familyRssMb, rssMb } = ctx.service;
  const user = await ctx.signUp();
  const tenMegabytes = Buffer.from('Ab. '.repeat(2_600_000));
  const attacks = [
    ['<b> x 200,000 (.html, 600 KB)', 'deep.html', unclosedTagsHtml(200_000)],
    ['PDF inflating to 300 MB', 'bomb.pdf', await pdfBomb(300 * 1024 * 1024)],
    [
      'PDF of 20 MB of text operators',
      'chatty.pdf',
      await pdfBomb(20 * 1024 * 1024, '(Boom boom) Tj T*\n', 'BT /F1 12 Tf 14 TL\n'),
    ],
    ['"Ab. " x 2.6 M (.txt, 10 MB)', 'ab.txt', tenMegabytes],
    ['5 of those at once', 'ab.txt', tenMegabytes, 5],
  ];
  const rows = [];
  for (const [attack, name, content, copies = 1] of attacks) {
    const { body, contentType } = multipartFile(name, content);
    let running = true;
    let maxHealthMs = 0;
    let healthErrors = 0;
    let peakRssMb = familyRssMb();
    let peakServiceMb = rssMb();
    const before = peakRssMb;
    const poller = (async () => {
      while (running) {
        const started = performance.now();
        // A connection the stalled service dropped counts as a failed probe, after the time it took.
        await fetch(`${baseUrl}/health/`).then(
          (response) => response.arrayBuffer(),
          () => healthErrors++,
        );
        maxHealthMs = Math.max(maxHealthMs, performance.now() - started);
        peakRssMb = Math.max(peakRssMb, familyRssMb());
        peakServiceMb = Math.max(peakServiceMb, rssMb());
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const started = performance.now();
    const responses = await Promise.all(
      Array.from({ length: copies }, () =>
        fetch(`${baseUrl}/v1/documents/`, {
          method: 'POST',
          headers: { ...user.auth, 'Content-Type': contentType },
          body,
        }),
      ),
    );
    const answers = await Promise.all(responses.map((response) => response.json().catch(() => ({}))));
    const seconds = (performance.now() - started) / 1000;
    running = false;
    await poller;
    responses.forEach((response, i) => ctx.log(`${attack}: ${response.status} ${answers[i].detail ?? ''}`));
    rows.push({
      attack,
      status: responses.map((response) => response.status).join(','),
      seconds: seconds.toFixed(2),
      health_max_ms: Math.round(maxHealthMs),
      health_errors: healthErrors,
      rss_before_mb: Math.round(before),
      rss_peak_mb: Math.round(peakRssMb),
      service_alone_peak_mb: Math.round(peakServiceMb),
    });
  }
  ctx.table('Hostile uploads (service and its workers)', rows);
  return { attacks: rows };
}
