// The audit trail's status for the header badges and the Audit view (its key, records,
// last verification), and a tick bumped on every audit event so views showing records or
// counters refresh on it.
import { useCallback, useMemo, useState, type ReactNode } from "react";
import type { AuditStatusView } from "../bindings";
import { api } from "../ipc";
import { createSlice } from "./context";
import { useConsoleEvent } from "./events";

interface Audit {
  /// Null until read, and when the status cannot be read (the badge says "unavailable").
  audit: AuditStatusView | null;
  /// Bumped on every audit event (views refresh on it).
  auditTick: number;
}

const [AuditContext, useAudit] = createSlice<Audit>("useAudit");
const [AuditActions, useAuditActions] = createSlice<{ refreshAudit: () => Promise<void> }>("useAuditActions");
export { useAudit, useAuditActions };

export function AuditProvider({ children }: { children: ReactNode }) {
  const [audit, setAudit] = useState<AuditStatusView | null>(null);
  const [auditTick, setAuditTick] = useState(0);

  const refreshAudit = useCallback(async () => {
    try {
      setAudit(await api.auditStatus());
    } catch {
      setAudit(null);
    }
  }, []);

  useConsoleEvent((ev) => {
    if (ev.kind === "audit_record" || ev.kind === "audit_changed" || ev.kind === "audit_key") {
      setAuditTick((t) => t + 1);
      void refreshAudit();
    }
  });

  const state = useMemo(() => ({ audit, auditTick }), [audit, auditTick]);
  const actions = useMemo(() => ({ refreshAudit }), [refreshAudit]);
  return (
    <AuditActions value={actions}>
      <AuditContext value={state}>{children}</AuditContext>
    </AuditActions>
  );
}
