/**
 * The product's substitution variables (`${jobid}`, `${oldStatus}`, …) in raise comments, alert texts and user
 * messages: names are matched without regard to case; an unknown one stays as written.
 */
export function substitute(text: string, values: Readonly<Record<string, string>>): string {
  const lower = new Map<string, string>();
  for (const [k, v] of Object.entries(values)) lower.set(k.toLowerCase(), v);
  return text.replace(/\$\{(\w+)\}/g, (all, name: string) => lower.get(name.toLowerCase()) ?? all);
}
