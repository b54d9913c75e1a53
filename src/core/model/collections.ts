/** A map of lists: `add` appends to the list of a key, making it on first use; keys keep their first order. */
export class Groups<K, V> extends Map<K, V[]> {
  add(key: K, value: V): void {
    const list = this.get(key);
    if (list) list.push(value);
    else this.set(key, [value]);
  }
}

/** Items grouped by a key, in their order, groups in the order their keys first appear. */
export function groupBy<T, K>(items: Iterable<T>, keyOf: (item: T) => K): Groups<K, T> {
  const groups = new Groups<K, T>();
  for (const item of items) groups.add(keyOf(item), item);
  return groups;
}
