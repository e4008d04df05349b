// The selected partition: its id (chosen in ./connections.tsx) and what the backend says of
// it (token, pool, login state, Luna extras), read when it is selected and again when the
// backend reports a change to it.
import { useCallback, useEffect, useMemo, useState, type ReactNode } from "react";
import type { PartitionView } from "../bindings";
import { api, toApiError } from "../ipc";
import { useSelection } from "./connections";
import i18n from "../i18n";
import { createSlice } from "./context";
import { useConsoleEvent } from "./events";
import { useToast } from "./toasts";

interface Partition {
  partitionId: string | null;
  /// The selected partition's view, or null while it is read (never another partition's).
  partition: PartitionView | null;
}

interface PartitionActions {
  selectPartition: (id: string | null) => void;
  refreshPartition: () => Promise<void>;
}

const [PartitionContext, usePartition] = createSlice<Partition>("usePartition");
const [PartitionActionsContext, usePartitionActions] = createSlice<PartitionActions>("usePartitionActions");
export { usePartition, usePartitionActions };

export function PartitionProvider({ children }: { children: ReactNode }) {
  const toast = useToast();
  const { partitionId, confirmed, selectPartition } = useSelection();
  const [partition, setPartition] = useState<PartitionView | null>(null);

  const refreshPartition = useCallback(async () => {
    if (!partitionId) return;
    try {
      setPartition(await api.partition(partitionId));
    } catch (e) {
      setPartition(null);
      toast("error", i18n.t("state.cannot_read_partition"), toApiError(e));
    }
  }, [partitionId, toast]);

  useEffect(() => {
    // A remembered partition is only asked for once the connections confirm it still exists.
    if (!partitionId || !confirmed) return;
    let live = true;
    api.partition(partitionId).then(
      (p) => live && setPartition(p),
      (e: unknown) => live && toast("error", i18n.t("state.cannot_read_partition"), toApiError(e)),
    );
    return () => {
      live = false;
    };
  }, [partitionId, confirmed, toast]);

  useConsoleEvent((ev) => {
    if (ev.kind === "partition_changed" && ev.partition_id === partitionId) void refreshPartition();
  });

  // Only the selected partition's view is shown (a stale one is dropped at selection).
  const shown = partition && partition.id === partitionId ? partition : null;
  const state = useMemo(() => ({ partitionId, partition: shown }), [partitionId, shown]);
  const actions = useMemo(() => ({ selectPartition, refreshPartition }), [selectPartition, refreshPartition]);
  return (
    <PartitionActionsContext value={actions}>
      <PartitionContext value={state}>{children}</PartitionContext>
    </PartitionActionsContext>
  );
}
