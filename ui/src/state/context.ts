// One React context with a hook that refuses to run outside its provider, so every slice of
// the state is declared the same way and a missing provider is a clear error, not a null.
import { createContext, useContext, type Provider } from "react";

export function createSlice<T>(name: string): [Provider<T | null>, () => T] {
  const Ctx = createContext<T | null>(null);
  Ctx.displayName = name;
  const use = () => {
    const value = useContext(Ctx);
    if (value === null) throw new Error(`${name} is used outside its provider`);
    return value;
  };
  return [Ctx.Provider, use];
}
