// The console's start: what the backend is (version, notes, warnings) or why it could not
// start; once it runs, the settings, the connections and the audit status are loaded, in
// that order. Innermost of the providers, as it fills the others.
import { useEffect, useMemo, useState, type ReactNode } from "react";
import type { AppStatus } from "../bindings";
import { api, toApiError } from "../ipc";
import { useAuditActions } from "./audit";
import { useConnectionsActions } from "./connections";
import { createSlice } from "./context";
import { useSettings } from "./settings";

/// Null while the backend is asked.
const [StatusContext, useAppStatus] = createSlice<{ status: AppStatus | null }>("useAppStatus");
export { useAppStatus };

export function StatusProvider({ children }: { children: ReactNode }) {
  const [status, setStatus] = useState<AppStatus | null>(null);
  const { setSettings } = useSettings();
  const { refreshConnections } = useConnectionsActions();
  const { refreshAudit } = useAuditActions();

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
  }, [setSettings, refreshConnections, refreshAudit]);

  const value = useMemo(() => ({ status }), [status]);
  return <StatusContext value={value}>{children}</StatusContext>;
}
