// Summary statistics of bench rounds: the median and the range.

export interface Stats {
  median: number;
  min: number;
  max: number;
}

export const stats = (xs: number[]): Stats => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  const median = s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { median, min: s[0]!, max: s[s.length - 1]! };
};
