//! A throwaway PostgreSQL cluster from Debian's packages, for the audit store's tests.
//! (Filled in with the audit trail.)
