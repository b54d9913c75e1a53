/**
 * Python's `repr(float)`: the shortest round-trip digits (the same digits JavaScript picks), laid out
 * the way CPython does, so bodies match the original Django server byte for byte.
 * CPython switches to exponent notation when the decimal exponent is < -4 or >= 16.
 */
export function pyFloat(x: number): string {
  // Between the two switches JavaScript writes the same digits without an exponent too, and CPython
  // adds ".0" to a whole number. Most numbers of a build (qualities, coordinates, loads) are here, and
  // the general layout below was a tenth of a cycle's time at 3,000 access points.
  const abs = Math.abs(x);
  if (abs >= 1e-4 && abs < 1e16) {
    const text = String(x);
    return text.includes(".") ? text : `${text}.0`;
  }
  return pyFloatLayout(x);
}

/** The layout from the digits alone, for any finite number (exported for the test of the short way above). */
export function pyFloatLayout(x: number): string {
  if (!Number.isFinite(x)) throw new RangeError(`not a finite number: ${x}`);
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const sign = x < 0 ? "-" : "";
  // toExponential() without argument yields the shortest round-trip digits, e.g. "1.2345e+3".
  const [mantissa, expText] = Math.abs(x).toExponential().split("e");
  const digits = mantissa.replace(".", "");
  const exp = Number(expText);
  if (exp < -4 || exp >= 16) {
    const frac = digits.slice(1);
    const e = Math.abs(exp).toString().padStart(2, "0");
    return `${sign}${digits[0]}${frac ? "." + frac : ""}e${exp < 0 ? "-" : "+"}${e}`;
  }
  if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
  const intLen = exp + 1;
  if (digits.length <= intLen) return `${sign}${digits}${"0".repeat(intLen - digits.length)}.0`;
  return `${sign}${digits.slice(0, intLen)}.${digits.slice(intLen)}`;
}
