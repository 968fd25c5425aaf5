/** `--server`: one URL or several, comma-separated (the nodes of one scheduler). Throws on one that is not a URL. */
export function serverList(text: string): URL[] {
  const parts = text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  if (parts.length === 0) throw new Error('no server URL given');
  return parts.map((p) => {
    try {
      return new URL(p);
    } catch {
      throw new Error(`"${p}" is not a URL`);
    }
  });
}
