import { createHash } from "node:crypto";

/**
 * File-name keys for values that come from routers (SSIDs, versions, MACs): injective, safe on every
 * file system and host. Letters a-z, digits, "-", "~" and "." (not leading) stay as they are, so most
 * values are their own key and a host's query placeholder reaches them directly; every other byte is
 * written `_XX` (upper-case hex of its UTF-8 byte), as are a trailing "." and the first letter of a
 * Windows device name (con, nul, com1, ...). No key holds an upper-case letter outside an
 * escape, so keys that differ only in case cannot exist (case-insensitive file systems), and no key
 * is ".", "..", hidden, or contains "/", "#", "?", "%" or control characters. Keys longer than 200
 * bytes become `_H` + SHA-256 (`H` is not a hex digit, so such keys never equal an escaped one).
 */
export function fileKey(value: string): string {
  let key = "";
  const bytes = Buffer.from(value, "utf8");
  // Windows refuses device names (con, nul, com1, ...) with any extension, and names ending in ".".
  const reserved = WINDOWS_DEVICE.test(value);
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    const dot = b === 0x2e && i > 0 && i < bytes.length - 1;
    const keep = !(reserved && i === 0) && ((b >= 0x61 && b <= 0x7a) || (b >= 0x30 && b <= 0x39) || b === 0x2d || b === 0x7e || dot);
    key += keep ? String.fromCharCode(b) : `_${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  if (key.length > 200) return `_H${createHash("sha256").update(bytes).digest("hex")}`;
  return key;
}

const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\.|$)/;

/** True when a host's query placeholder substitution (identity on A-Za-z0-9._~-) lands on the key. */
export function isOwnKey(value: string): boolean {
  return value !== "" && fileKey(value) === value;
}

/** Key of the `firmware_version=` (empty value) filter: mesh_version is null. Cannot collide with fileKey(). */
export const NULL_KEY = "_null";

/** The inverse of fileKey(); undefined for hashed keys, NULL_KEY and names that are not keys. */
export function unkey(key: string): string | undefined {
  if (key === "" || key === NULL_KEY || key.startsWith("_H")) return undefined;
  const bytes: number[] = [];
  for (let i = 0; i < key.length; i++) {
    if (key[i] === "_") {
      const hex = key.slice(i + 1, i + 3);
      if (!/^[0-9A-F]{2}$/.test(hex)) return undefined;
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else bytes.push(key.charCodeAt(i));
  }
  const value = Buffer.from(bytes).toString("utf8");
  // Only a real key: the value must map back to it (rejects `_41` for "A" spelled "a", invalid UTF-8).
  return fileKey(value) === key ? value : undefined;
}
