/**
 * Keeps the service's own log lines (Powertools' JSON: info on stdout, warnings and errors on
 * stderr) out of a script's output, for scripts that run the service in-process and print a report
 * of their own (the bench, the docs screenshots). Anything else is written as before. The bench's
 * cost model still counts those lines' bytes: it meters the stream above this filter.
 */
export function quietServiceLogs(): void {
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream) as (...a: unknown[]) => boolean;
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (typeof chunk === 'string' && chunk.startsWith('{"level":')) return true;
      return write(chunk, ...rest);
    }) as typeof stream.write;
  }
}
