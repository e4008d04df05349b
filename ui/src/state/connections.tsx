// The modules and their slots, and which of their partitions is selected. The selection is
// remembered ("hsmc.partition") and checked against every fresh list: a partition that is
// gone gives way to the first one listed. Refreshed on the backend's partition events.
import { useCallback, useMemo, useState, type ReactNode } from "react";
import type { ConnectionView } from "../bindings";
import { toApiError, api } from "../ipc";
import i18n from "../i18n";
import { createSlice } from "./context";
import { useConsoleEvent } from "./events";
import { remember, remembered } from "./storage";
import { useToast } from "./toasts";

const KEY = "hsmc.partition";

interface Connections {
  connections: ConnectionView[];
  /// The first listing has finished (successfully or not).
  connectionsLoaded: boolean;
}

/// The selection, for the partition slice (./partition.tsx) that reads and publishes it.
export interface Selection {
  partitionId: string | null;
  /// Set once the connections have been listed: a remembered id is only used after that.
  confirmed: boolean;
  selectPartition: (id: string | null) => void;
}

const [ConnectionsContext, useConnections] = createSlice<Connections>("useConnections");
const [ConnectionsActions, useConnectionsActions] = createSlice<{ refreshConnections: () => Promise<void> }>("useConnectionsActions");
const [SelectionContext, useSelection] = createSlice<Selection>("useSelection");
export { useConnections, useConnectionsActions, useSelection };

function partitionIds(connections: ConnectionView[]): string[] {
  return connections.flatMap((m) => m.slots.map((s) => s.partition_id)).filter((x): x is string => !!x);
}

export function ConnectionsProvider({ children }: { children: ReactNode }) {
  const toast = useToast();
  const [connections, setConnections] = useState<ConnectionView[]>([]);
  const [connectionsLoaded, setConnectionsLoaded] = useState(false);
  const [partitionId, setPartitionId] = useState<string | null>(() => remembered(KEY) || null);

  const refreshConnections = useCallback(async () => {
    try {
      const c = await api.connections();
      setConnections(c);
      setPartitionId((current) => {
        const all = partitionIds(c);
        if (current && all.includes(current)) return current;
        const first = all[0] ?? null;
        remember(KEY, first);
        return first;
      });
    } catch (e) {
      toast("error", i18n.t("state.cannot_list_modules"), toApiError(e));
    } finally {
      setConnectionsLoaded(true);
    }
  }, [toast]);

  const selectPartition = useCallback((id: string | null) => {
    setPartitionId(id);
    remember(KEY, id);
  }, []);

  useConsoleEvent((ev) => {
    if (ev.kind === "partition_changed") void refreshConnections();
  });

  const state = useMemo(() => ({ connections, connectionsLoaded }), [connections, connectionsLoaded]);
  const actions = useMemo(() => ({ refreshConnections }), [refreshConnections]);
  const selection = useMemo(
    () => ({ partitionId, confirmed: connectionsLoaded, selectPartition }),
    [partitionId, connectionsLoaded, selectPartition],
  );
  return (
    <ConnectionsActions value={actions}>
      <ConnectionsContext value={state}>
        <SelectionContext value={selection}>{children}</SelectionContext>
      </ConnectionsContext>
    </ConnectionsActions>
  );
}
