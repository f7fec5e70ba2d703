/**
 * Waits for `work` up to `ms`: 'done', 'failed' (it rejected) or 'deadline'. Never rejects, and
 * leaves no timer behind: for quit paths that must end whatever the work does.
 */
export async function withDeadline(work: Promise<unknown>, ms: number): Promise<'done' | 'failed' | 'deadline'> {
  let timer: NodeJS.Timeout | null = null;
  const deadline = new Promise<'deadline'>((r) => {
    timer = setTimeout(() => r('deadline'), ms);
  });
  try {
    return await Promise.race([
      work.then(
        () => 'done' as const,
        () => 'failed' as const,
      ),
      deadline,
    ]);
  } finally {
    if (timer) clearTimeout(timer);
  }
}
