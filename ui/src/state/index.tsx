// The window's state, one slice per concern, each with its own provider and hooks, so a
// component re-renders only for the slices it reads. Everything authoritative lives in
// Rust; these only cache what the window shows and refresh it on the backend's events.
//
//   toasts       notifications                         useToast, useToasts
//   navigation   the view shown (remembered)           useView, useNavigate
//   jumps        "jump to" targets between views       useJumps
//   signQueue    files waiting in the Sign view        useSignQueue
//   settings     the remembered settings, the theme    useSettings
//   connections  modules, slots, the selection         useConnections, useConnectionsActions
//   partition    the selected partition                usePartition, usePartitionActions
//   audit        the trail's status, the audit tick    useAudit, useAuditActions
//   status       the start, and the backend's info     useAppStatus
//   keygen       the key generation under way          useKeygen, useKeygenActions
//
// Two slices belong to one feature and live in its folder (features/sign/signQueue,
// features/keys/keygen); they are composed here with the others. No slice imports a view
// or nav.tsx: views are named by id (viewIds.ts).
import type { ReactNode } from "react";
import type { View } from "../viewIds";
import { AuditProvider } from "./audit";
import { ConnectionsProvider } from "./connections";
import { JumpsProvider } from "./jumps";
import { KeygenProvider } from "../features/keys/keygen";
import { NavigationProvider } from "./navigation";
import { PartitionProvider } from "./partition";
import { SettingsProvider } from "./settings";
import { SignQueueProvider } from "../features/sign/signQueue";
import { StatusProvider } from "./status";
import { ToastProvider } from "./toasts";

export { useAudit, useAuditActions } from "./audit";
export { useConnections, useConnectionsActions } from "./connections";
export { useJumps, type SignedFile } from "./jumps";
export { timeLeftMs, useKeygen, useKeygenActions, type KeygenForm, type KeygenJob } from "../features/keys/keygen";
export { useNavigate, useView } from "./navigation";
export { usePartition, usePartitionActions } from "./partition";
export { useSettings } from "./settings";
export { useSignQueue } from "../features/sign/signQueue";
export { useAppStatus } from "./status";
export { useToast, useToasts, type Toast } from "./toasts";

/// All the slices, outermost first: a slice may use the ones outside it (the connections
/// report errors as toasts; the start fills the settings, connections and audit status).
export function StateProvider({ views, children }: { views: readonly View[]; children: ReactNode }) {
  return (
    <ToastProvider>
      <NavigationProvider views={views}>
        <JumpsProvider>
          <SignQueueProvider>
            <SettingsProvider>
              <ConnectionsProvider>
                <PartitionProvider>
                  <AuditProvider>
                    <StatusProvider>
                      <KeygenProvider>{children}</KeygenProvider>
                    </StatusProvider>
                  </AuditProvider>
                </PartitionProvider>
              </ConnectionsProvider>
            </SettingsProvider>
          </SignQueueProvider>
        </JumpsProvider>
      </NavigationProvider>
    </ToastProvider>
  );
}
