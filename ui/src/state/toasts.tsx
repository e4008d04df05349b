// Notifications: at most five at a time; successes and notes fade after six seconds, errors
// stay until dismissed. `useToast` is stable, so calling it never re-renders a view when a
// notification comes or goes; only the list (`useToasts`) does.
import { useCallback, useMemo, useRef, useState, type ReactNode } from "react";
import type { ApiError } from "../bindings";
import { createSlice } from "./context";

export interface Toast {
  id: number;
  kind: "ok" | "error" | "info";
  text: string;
  error?: ApiError;
}

export type ShowToast = (kind: Toast["kind"], text: string, error?: ApiError) => void;

const [ToastFn, useToast] = createSlice<ShowToast>("useToast");
const [ToastList, useToasts] = createSlice<{ toasts: Toast[]; dismiss: (id: number) => void }>("useToasts");
export { useToast, useToasts };

export function ToastProvider({ children }: { children: ReactNode }) {
  const [toasts, setToasts] = useState<Toast[]>([]);
  const nextId = useRef(1);
  const toast = useCallback<ShowToast>((kind, text, error) => {
    const id = nextId.current++;
    setToasts((t) => [...t.slice(-4), { id, kind, text, ...(error ? { error } : {}) }]);
    if (kind !== "error") setTimeout(() => setToasts((t) => t.filter((x) => x.id !== id)), 6000);
  }, []);
  const dismiss = useCallback((id: number) => setToasts((t) => t.filter((x) => x.id !== id)), []);
  const list = useMemo(() => ({ toasts, dismiss }), [toasts, dismiss]);
  return (
    <ToastFn value={toast}>
      <ToastList value={list}>{children}</ToastList>
    </ToastFn>
  );
}
