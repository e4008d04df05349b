// One backend command as a component uses it: run it, know whether it is running, show its
// result or its error. Every failure becomes the backend's ApiError (toApiError) here, once,
// instead of in a try/catch in each view.
//
//   const { run: loadKeys, data: keys, error } = useCommand(api.listKeys);
//   useEffect(() => void loadKeys(partitionId), [loadKeys, partitionId]);
//   {error && <ErrorBox error={error} />}
//
// A command can be any async function (several calls, a toast on success). `run` is the same
// function for the component's life and calls the command of the latest render, so what a
// run depends on is passed as arguments: the effect that runs it then lists it in its
// dependencies (`partitionId` above). Only the latest run updates `data`, `error` and
// `loading`: a slower, earlier answer never overwrites a newer one. With `errorToast`, a
// failure is also shown as an error notification with that title. A run clears the last
// error as it starts; with `keepError` (polling, reloading on events) the error stays shown
// until the next success, so a persistent failure does not blink.
import { useCallback, useLayoutEffect, useMemo, useRef, useState } from "react";
import type { ApiError } from "./bindings";
import { toApiError } from "./ipc";
import { useToast } from "./state";

export interface CommandOptions {
  /// Report a failure as an error notification with this title (as well as in `error`).
  errorToast?: string;
  /// Keep the last error while a run is on its way (cleared when one succeeds).
  keepError?: boolean;
}

export interface Command<A extends unknown[], T> {
  /// Runs the command. Resolves to its result, or to undefined when it failed or a later run
  /// (or `reset`) replaced it; never rejects.
  run: (...args: A) => Promise<T | undefined>;
  /// The latest successful run's result (kept while a new run is on its way or fails).
  data: T | null;
  /// The latest run's error; cleared when a run starts (or, with `keepError`, succeeds).
  error: ApiError | null;
  loading: boolean;
  /// Forgets the result and the error, and any run still on its way.
  reset: () => void;
}

interface CommandState<T> {
  data: T | null;
  error: ApiError | null;
  loading: boolean;
}

const IDLE = { data: null, error: null, loading: false } as const;

export function useCommand<A extends unknown[], T>(command: (...args: A) => Promise<T>, options: CommandOptions = {}): Command<A, T> {
  const toast = useToast();
  const [state, setState] = useState<CommandState<T>>(IDLE);
  // The command and options of the latest render: `run` stays the same function for the
  // component's life (safe in effect dependencies) and still calls what it was last given.
  const latest = useRef({ command, options });
  useLayoutEffect(() => {
    latest.current = { command, options };
  });
  const runs = useRef(0);

  const run = useCallback(
    async (...args: A): Promise<T | undefined> => {
      const id = ++runs.current;
      const { command, options } = latest.current;
      setState((s) => ({ ...s, error: options.keepError ? s.error : null, loading: true }));
      try {
        const data = await command(...args);
        if (id !== runs.current) return undefined;
        setState({ data, error: null, loading: false });
        return data;
      } catch (e) {
        const error = toApiError(e);
        if (options.errorToast) toast("error", options.errorToast, error);
        if (id === runs.current) setState((s) => ({ ...s, error, loading: false }));
        return undefined;
      }
    },
    [toast],
  );

  const reset = useCallback(() => {
    runs.current++;
    setState(IDLE);
  }, []);

  return useMemo(() => ({ ...state, run, reset }), [state, run, reset]);
}
