//! core's `Tree` over the instance's root: directories opened and removed inside it.

use wisp_core::host::tree::Tree;
use wisp_core::host::HostError;
use wisp_os_linux::fs::Resolve;

use super::files::Root;
use super::host_error;

impl Tree for Root<'_> {
    fn is_directory(&mut self, path: &[u8]) -> bool {
        self.root.open_beneath(path, Resolve::InRoot).is_ok()
    }

    fn remove_dir(&mut self, path: &[u8]) -> Result<bool, HostError> {
        let (dir, name) = self.parent(path)?;
        dir.remove_dir(name).map_err(host_error)
    }
}
