// The dev accounts' names (GET /devnet/names): the page names an address "dev0" wherever it shows
// one, with the address beside it or in its title. Read once per page load; a chain without dev
// accounts (or a node that does not answer) names none.
import { getJson } from "./api.js";

const names = new Map<string, string>();
let loaded: Promise<void> | undefined;

/** Loads the names once; every view awaits it before it renders. */
export function loadNames(): Promise<void> {
  loaded ??= getJson("/devnet/names").then(
    (answer) => {
      for (const a of answer["accounts"] as Array<{ name: string; address: string }>) names.set(a.address.toLowerCase(), a.name);
    },
    () => undefined,
  );
  return loaded;
}

/** The dev account's name of `address`, or undefined. */
export const nameOf = (address: string): string | undefined => names.get(address.toLowerCase());
