//! What `hsmc pin …` and `hsmc token …` show.

use console::credentials::{PinChanged, TokenInitialized};
use console::views::UserKind;
use console::ApiResult;
use serde::Serialize;

use crate::render::{Page, Render};

/// `pin change`.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct PinChangedView(pub PinChanged);

impl Render for PinChangedView {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        writeln!(page, "PIN changed ({})", self.0.user);
        Ok(())
    }
}

/// `pin init`.
#[derive(Debug, Serialize)]
pub struct PinSet {
    pub partition_id: String,
    #[serde(rename = "for")]
    pub target: UserKind,
}

impl Render for PinSet {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        writeln!(page, "PIN set for {}", self.target);
        Ok(())
    }
}

/// `token init`.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct Initialized(pub TokenInitialized);

impl Render for Initialized {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        let t = &self.0;
        writeln!(
            page,
            "token initialized as '{}'; {} object(s) destroyed",
            t.label, t.objects_destroyed
        );
        writeln!(
            page,
            "note: set the user PIN next: hsmc --token '{}' --so pin init",
            t.label
        );
        Ok(())
    }
}
