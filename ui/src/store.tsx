// Shared UI state: the app's status, the connections, the selected partition, the audit
// badge, notifications. Everything authoritative lives in Rust; this only caches what the
// window shows and refreshes it on the backend's events.
import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import type { ApiError, AppStatus, AuditStatusView, ConnectionView, PartitionView, Settings } from "./bindings";
import { api, onConsoleEvent, toApiError } from "./ipc";

export type View = "connections" | "partition" | "keys" | "sign" | "verify" | "hss" | "stats" | "probes" | "audit" | "settings";

export interface Toast {
  id: number;
  kind: "ok" | "error" | "info";
  text: string;
  error?: ApiError;
}

interface Store {
  status: AppStatus | null;
  connections: ConnectionView[];
  connectionsLoaded: boolean;
  settings: Settings | null;
  partitionId: string | null;
  partition: PartitionView | null;
  audit: AuditStatusView | null;
  view: View;
  /// Bumped on every audit event (views refresh on it).
  auditTick: number;
  setView: (v: View) => void;
  selectPartition: (id: string | null) => void;
  refreshConnections: () => Promise<void>;
  refreshPartition: () => Promise<void>;
  refreshAudit: () => Promise<void>;
  setSettings: (s: Settings) => void;
  toast: (kind: Toast["kind"], text: string, error?: ApiError) => void;
  /// Set by "jump to": the Keys view searches for it, the Audit view filters by it, the
  /// Verify view opens with the signed file and its signature.
  keySearch: string;
  setKeySearch: (s: string) => void;
  auditSearch: string;
  setAuditSearch: (s: string) => void;
  verifyTarget: { file: string; sig: string } | null;
  setVerifyTarget: (t: { file: string; sig: string } | null) => void;
  /// Files dropped on the window or picked, waiting in the Sign view.
  signFiles: string[];
  setSignFiles: (f: string[] | ((old: string[]) => string[])) => void;
  toasts: Toast[];
  dismiss: (id: number) => void;
}

const Ctx = createContext<Store | null>(null);

function remembered<T extends string>(key: string, fallback: T): T {
  try {
    return (localStorage.getItem(key) as T | null) ?? fallback;
  } catch {
    return fallback;
  }
}

function remember(key: string, value: string | null) {
  try {
    if (value === null) localStorage.removeItem(key);
    else localStorage.setItem(key, value);
  } catch {
    /* storage unavailable: nothing to remember */
  }
}

export function StoreProvider({ children }: { children: ReactNode }) {
  const [status, setStatus] = useState<AppStatus | null>(null);
  const [connections, setConnections] = useState<ConnectionView[]>([]);
  const [connectionsLoaded, setConnectionsLoaded] = useState(false);
  const [settings, setSettings] = useState<Settings | null>(null);
  const [partitionId, setPartitionId] = useState<string | null>(() => remembered<string>("hsmc.partition", "") || null);
  const [partition, setPartition] = useState<PartitionView | null>(null);
  const [audit, setAudit] = useState<AuditStatusView | null>(null);
  const [view, setViewState] = useState<View>(() => remembered<View>("hsmc.view", "connections"));
  const [auditTick, setAuditTick] = useState(0);
  const [toasts, setToasts] = useState<Toast[]>([]);
  const [signFiles, setSignFiles] = useState<string[]>([]);
  const [keySearch, setKeySearch] = useState("");
  const [auditSearch, setAuditSearch] = useState("");
  const [verifyTarget, setVerifyTarget] = useState<{ file: string; sig: string } | null>(null);
  const nextToast = useRef(1);

  const toast = useCallback((kind: Toast["kind"], text: string, error?: ApiError) => {
    const id = nextToast.current++;
    setToasts((t) => [...t.slice(-4), { id, kind, text, ...(error ? { error } : {}) }]);
    if (kind !== "error") setTimeout(() => setToasts((t) => t.filter((x) => x.id !== id)), 6000);
  }, []);
  const dismiss = useCallback((id: number) => setToasts((t) => t.filter((x) => x.id !== id)), []);

  const setView = useCallback((v: View) => {
    setViewState(v);
    remember("hsmc.view", v);
  }, []);

  const refreshConnections = useCallback(async () => {
    try {
      const c = await api.connections();
      setConnections(c);
      setPartitionId((current) => {
        const all = c.flatMap((m) => m.slots.map((s) => s.partition_id)).filter((x): x is string => !!x);
        if (current && all.includes(current)) return current;
        const first = all[0] ?? null;
        remember("hsmc.partition", first);
        return first;
      });
    } catch (e) {
      toast("error", "Could not list the modules", toApiError(e));
    } finally {
      setConnectionsLoaded(true);
    }
  }, [toast]);

  const refreshPartition = useCallback(async () => {
    if (!partitionId) return;
    try {
      setPartition(await api.partition(partitionId));
    } catch (e) {
      setPartition(null);
      toast("error", "Could not read the partition", toApiError(e));
    }
  }, [partitionId, toast]);

  const refreshAudit = useCallback(async () => {
    try {
      setAudit(await api.auditStatus());
    } catch {
      setAudit(null);
    }
  }, []);

  const selectPartition = useCallback((id: string | null) => {
    setPartitionId(id);
    remember("hsmc.partition", id);
  }, []);

  useEffect(() => {
    void (async () => {
      try {
        const s = await api.appInfo();
        setStatus(s);
        if (s.info) {
          setSettings(await api.getSettings());
          await refreshConnections();
          await refreshAudit();
        }
      } catch (e) {
        setStatus({ info: null, startup_error: toApiError(e) });
      }
    })();
  }, [refreshConnections, refreshAudit]);

  useEffect(() => {
    // A remembered partition is only asked for once the connections confirm it still exists.
    if (!partitionId || !connectionsLoaded) return;
    let live = true;
    api.partition(partitionId).then(
      (p) => live && setPartition(p),
      (e: unknown) => live && toast("error", "Could not read the partition", toApiError(e)),
    );
    return () => {
      live = false;
    };
  }, [partitionId, connectionsLoaded, toast]);

  useEffect(() => {
    let unlisten: (() => void) | undefined;
    let gone = false;
    void onConsoleEvent((ev) => {
      if (ev.kind === "partition_changed") {
        void refreshConnections();
        if (ev.partition_id === partitionId) void refreshPartition();
      }
      if (ev.kind === "audit_record" || ev.kind === "audit_changed" || ev.kind === "audit_key") {
        setAuditTick((t) => t + 1);
        void refreshAudit();
      }
    }).then((u) => {
      if (gone) u();
      else unlisten = u;
    });
    return () => {
      gone = true;
      unlisten?.();
    };
  }, [partitionId, refreshConnections, refreshPartition, refreshAudit]);

  useEffect(() => {
    const theme = settings?.theme ?? "system";
    document.documentElement.dataset.theme = theme;
  }, [settings?.theme]);

  const value = useMemo<Store>(
    () => ({
      status,
      connections,
      connectionsLoaded,
      settings,
      partitionId,
      // Only the selected partition's view is shown (a stale one is dropped at selection).
      partition: partition && partition.id === partitionId ? partition : null,
      audit,
      view,
      auditTick,
      setView,
      selectPartition,
      refreshConnections,
      refreshPartition,
      refreshAudit,
      setSettings,
      toast,
      toasts,
      dismiss,
      signFiles,
      setSignFiles,
      keySearch,
      setKeySearch,
      auditSearch,
      setAuditSearch,
      verifyTarget,
      setVerifyTarget,
    }),
    [
      keySearch,
      auditSearch,
      verifyTarget,
      signFiles,
      status,
      connections,
      connectionsLoaded,
      settings,
      partitionId,
      partition,
      audit,
      view,
      auditTick,
      setView,
      selectPartition,
      refreshConnections,
      refreshPartition,
      refreshAudit,
      toast,
      toasts,
      dismiss,
    ],
  );
  return <Ctx.Provider value={value}>{children}</Ctx.Provider>;
}

export function useStore(): Store {
  const s = useContext(Ctx);
  if (!s) throw new Error("useStore outside StoreProvider");
  return s;
}
