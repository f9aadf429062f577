//! What a store is read and written as: the options nc-dispatch takes from a location's mode
//! words (nc-store parses them; this crate never sees the name).

/// How a store is read and written: NCZarr or pure Zarr, XArray's dimension names, Zarr v3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZarrModes {
    /// Pure Zarr: no NCZarr metadata written or required (mode words `zarr`, `v3`).
    pub pure_zarr: bool,
    /// XArray's `_ARRAY_DIMENSIONS` read and written (the default; `noxarray` turns it off).
    pub xarray: bool,
    /// Write Zarr version 3 (reading finds the version by itself).
    pub v3: bool,
}

/// What a loader is told about the store it reads.
pub(crate) struct Opening<'a> {
    /// The store as shown in messages (a path or URL).
    pub shown: &'a str,
    /// The dataset name.
    pub name: &'a str,
    /// How to read it.
    pub modes: ZarrModes,
}

impl Default for ZarrModes {
    /// NCZarr with XArray's dimension names, version 2: what a name with only `nczarr` asks.
    fn default() -> Self {
        ZarrModes {
            pure_zarr: false,
            xarray: true,
            v3: false,
        }
    }
}

impl From<&nc_store::StoreModes> for ZarrModes {
    fn from(m: &nc_store::StoreModes) -> Self {
        ZarrModes {
            pure_zarr: m.pure_zarr,
            xarray: m.xarray,
            v3: m.v3,
        }
    }
}

impl crate::NczarrLayout {
    /// The layout a location's `layout=` parameter asks for: netCDF-C 4.10's (netCDF4-python's)
    /// when absent, `4.9` (netCDF-C 4.9.0) or `documented`.
    ///
    /// # Errors
    /// [`crate::ZarrError::BadLocation`] naming `location` for another value.
    pub fn from_param(
        value: Option<&str>,
        location: &str,
    ) -> Result<crate::NczarrLayout, crate::ZarrError> {
        match value.map(str::to_ascii_lowercase).as_deref() {
            Some("4.9") => Ok(crate::NczarrLayout::NetcdfC490),
            None | Some("4.10") => Ok(crate::NczarrLayout::NetcdfC410),
            Some("documented") => Ok(crate::NczarrLayout::Documented),
            Some(other) => Err(crate::ZarrError::BadLocation {
                location: location.to_string(),
                reason: format!(
                    "layout={other}: use layout=4.10 (netCDF-C 4.10 and netCDF4-python, the \
                     default), layout=4.9 (netCDF-C 4.9.0) or layout=documented"
                ),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NczarrLayout;

    #[test]
    fn modes_and_layouts() {
        let m = nc_store::StoreModes {
            pure_zarr: true,
            xarray: false,
            v3: true,
            layout: None,
        };
        assert_eq!(
            ZarrModes::from(&m),
            ZarrModes {
                pure_zarr: true,
                xarray: false,
                v3: true
            }
        );
        assert_eq!(
            NczarrLayout::from_param(None, "x").unwrap(),
            NczarrLayout::NetcdfC410
        );
        assert_eq!(
            NczarrLayout::from_param(Some("4.9"), "x").unwrap(),
            NczarrLayout::NetcdfC490
        );
        assert_eq!(
            NczarrLayout::from_param(Some("Documented"), "x").unwrap(),
            NczarrLayout::Documented
        );
        let e = NczarrLayout::from_param(Some("5"), "s.zarr").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("\"s.zarr\" is not an NCZarr/Zarr location: layout=5"),
            "{e}"
        );
    }
}
