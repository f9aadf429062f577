//! The join as the kerchunk reference writer asks for it (`ncdump-rs --kerchunk IN1 IN2 ...`):
//! which variables run along a join dimension and where each input's records begin, which is
//! the join coordinate (its rebased values go inline), each input's URL, and each input opened
//! on demand through the join's bounded set of open inputs.

use nc_dataset::{DataSource, Dataset, VarId};
use nc_dispatch::{JoinedInputs, ZarrError};

use crate::Join;

impl JoinedInputs for Join {
    fn inputs(&self) -> usize {
        self.source.plan().inputs.len()
    }

    fn name(&self, input: usize) -> String {
        self.source.plan().inputs[input].display()
    }

    fn url(&self, input: usize) -> Result<String, ZarrError> {
        let loc = &self.source.plan().inputs[input];
        nc_dispatch::reference_url(loc).map_err(|e| ZarrError::Input {
            file: loc.display(),
            msg: e.to_string(),
        })
    }

    fn join(&self, var: VarId) -> Option<(usize, &[u64])> {
        let plan = self.source.plan();
        let (axis, j) = plan.routes.get(var.0)?.join?;
        Some((axis, &plan.joins[j].offsets))
    }

    fn is_coordinate(&self, var: VarId) -> bool {
        let plan = self.source.plan();
        plan.routes.get(var.0).is_some_and(|r| {
            r.join
                .is_some_and(|(_, j)| plan.joins[j].coord.as_deref() == Some(r.path.as_str()))
        })
    }

    fn with_input(
        &self,
        input: usize,
        f: &mut dyn FnMut(&Dataset, &dyn DataSource) -> Result<(), ZarrError>,
    ) -> Result<(), ZarrError> {
        let opened = self.source.opened(input).map_err(|e| ZarrError::Input {
            file: self.name(input),
            msg: e.to_string(),
        })?;
        f(opened.dataset(), opened.source())
    }
}
