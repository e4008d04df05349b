// After a credential changed: the connections, the partition and the audit status read again.
import { useAuditActions, useConnectionsActions, usePartitionActions } from "../../state";

export function useRefresh() {
  const { refreshConnections } = useConnectionsActions();
  const { refreshPartition } = usePartitionActions();
  const { refreshAudit } = useAuditActions();
  return async () => {
    await Promise.all([refreshConnections(), refreshPartition(), refreshAudit()]);
  };
}
