//! `hsmc objects …` on the command line.

use std::path::PathBuf;

use clap::{Subcommand, ValueEnum};
use console::objects::ObjectClass;

#[derive(Debug, Subcommand)]
pub enum ObjectsCommand {
    /// Import a certificate, a public key, or any file as a data object.
    ///
    /// A certificate in PEM, DER, a PEM chain leaf first, or a .p7b; a public key as SPKI
    /// PEM/DER; with --data any file as a data object. A certificate of a key pair on the
    /// token gets the key's ID and label; CA certificates are stored as authorities.
    Import {
        file: PathBuf,
        /// The label (default: the key's, for its certificate; else the CN or file name).
        #[arg(long)]
        label: Option<String>,
        /// CKA_ID in hex (default: the key's, for its certificate).
        #[arg(long)]
        id: Option<String>,
        /// Import the file as it is, as a data object (CKO_DATA).
        #[arg(long)]
        data: bool,
        /// The data object's CKA_APPLICATION.
        #[arg(long, requires = "data")]
        application: Option<String>,
    },
    /// List objects, of one class with --class.
    Ls {
        #[arg(long, value_enum)]
        class: Option<ClassArg>,
    },
    /// Write a certificate, public key or data object to a file (never over one).
    Export {
        /// label:NAME, id:HEX, uid:UNIQUE-ID or handle:N (a certificate first, then data, then public key)
        object: String,
        #[arg(long, short)]
        out: PathBuf,
        /// pem or der (default: der for a .der/.cer file name, else pem).
        #[arg(long, value_enum)]
        format: Option<FormatArg>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClassArg {
    Cert,
    Data,
    Public,
    Private,
    Secret,
}

impl ClassArg {
    pub fn class(self) -> ObjectClass {
        match self {
            ClassArg::Cert => ObjectClass::Cert,
            ClassArg::Data => ObjectClass::Data,
            ClassArg::Public => ObjectClass::Public,
            ClassArg::Private => ObjectClass::Private,
            ClassArg::Secret => ObjectClass::Secret,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Pem,
    Der,
}
