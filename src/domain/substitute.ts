/**
 * The product's substitution variables (`${jobid}`, `${oldStatus}`, …) in raise comments, alert texts and user
 * messages: names are matched without regard to case; an unknown one stays as written.
 */
export function substitute(text: string, values: Readonly<Record<string, string>>): string {
  const lower: Record<string, string> = {};
  for (const [k, v] of Object.entries(values)) lower[k.toLowerCase()] = v;
  return text.replace(/\$\{(\w+)\}/g, (all, name: string) => lower[name.toLowerCase()] ?? all);
}
