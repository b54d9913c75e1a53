/** String helpers that follow Python's semantics, since the original server's choices were made in Python. */

/** A count with its noun, for people: "1 file", "4,699 files". */
export function plural(n: number, noun: string, nouns = `${noun}s`): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? noun : nouns}`;
}

/** Compares by Unicode code point, as Python's `str` ordering does (JS `<` compares UTF-16 units). */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.codePointAt(i)!;
    const cb = b.codePointAt(i)!;
    if (ca !== cb) return ca - cb;
    if (ca > 0xffff) i++;
  }
  return a.length - b.length;
}

/** Levenshtein distance, for "did you mean" suggestions on unknown field names. */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length];
}

export function nearest(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const k of known) {
    const d = editDistance(name.toLowerCase(), k.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  return bestDistance <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined;
}

/**
 * Fixed-point decimal text with exactly `places` fraction digits (Django's DecimalField rendering),
 * from a JSON number or decimal text, rounding half to even like Python's `Decimal.quantize`.
 */
export function fixedDecimal(value: number | string, places: number): string | undefined {
  const text = typeof value === "number" ? plainNumberText(value) : value.trim();
  const m = /^([+-]?)(\d+)(?:\.(\d*))?$/.exec(text);
  if (!m) return undefined;
  const [, sign, intPart, fracPart = ""] = m;
  let digits = intPart.replace(/^0+(?=\d)/, "") + fracPart.padEnd(places, "0").slice(0, places);
  const rest = fracPart.slice(places);
  if (rest.length > 0) {
    const first = Number(rest[0]);
    const beyond = /[1-9]/.test(rest.slice(1));
    const lastEven = Number(digits[digits.length - 1]) % 2 === 0;
    if (first > 5 || (first === 5 && (beyond || !lastEven))) digits = incrementDigits(digits);
  }
  const i = digits.length - places;
  const out = places > 0 ? `${digits.slice(0, i)}.${digits.slice(i)}` : digits;
  return sign === "-" && /[1-9]/.test(out) ? `-${out}` : out;
}

function incrementDigits(digits: string): string {
  const a = digits.split("");
  for (let i = a.length - 1; i >= 0; i--) {
    if (a[i] === "9") a[i] = "0";
    else {
      a[i] = String(Number(a[i]) + 1);
      return a.join("");
    }
  }
  return "1" + a.join("");
}

function plainNumberText(x: number): string {
  if (Number.isInteger(x) && Math.abs(x) < 1e21) return x.toFixed(0);
  const s = String(x);
  if (!/e/i.test(s)) return s;
  // Small or large values in exponent form: expand through toFixed with enough digits.
  return x.toFixed(20).replace(/0+$/, "");
}
