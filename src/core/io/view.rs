//! File views (`MPI_File_set_view`): which bytes of the file a rank sees. The view is a
//! displacement, an elementary type and a file type tiled from the displacement on; a
//! position in the view counts data bytes of that tiling (`etype` units at the C boundary).
//! The file type's compiled layout program maps data bytes to file offsets, the same walk
//! that lists the segments of a memory transfer.

use crate::core::datatype::{engine, Dtype};
use crate::core::error::{fail, MpiResult};
use crate::mpi_abi::consts::*;
use std::sync::Arc;

/// How file data is represented (`datarep`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Datarep {
    /// `native`: memory bytes as they are.
    Native,
    /// `internal`: this implementation's choice, which is `native`.
    Internal,
    /// `external32`: the standard's big-endian portable representation.
    External32,
}

impl Datarep {
    /// The representation named `name` (`MPI_ERR_UNSUPPORTED_DATAREP` for others).
    pub fn parse(name: &str) -> MpiResult<Datarep> {
        match name {
            "native" => Ok(Datarep::Native),
            "internal" => Ok(Datarep::Internal),
            "external32" => Ok(Datarep::External32),
            other => fail(
                MPI_ERR_UNSUPPORTED_DATAREP,
                format!(
                    "data representation \"{other}\" is not known (native, internal and \
                     external32 are)"
                ),
            ),
        }
    }

    /// The name `MPI_File_get_view` returns.
    pub fn name(self) -> &'static str {
        match self {
            Datarep::Native => "native",
            Datarep::Internal => "internal",
            Datarep::External32 => "external32",
        }
    }
}

/// A file view.
#[derive(Clone, Debug)]
pub struct View {
    /// Displacement: bytes from the start of the file where the tiling starts.
    pub disp: u64,
    /// Elementary type (its handle as the user gave it, and the type).
    pub etype: (usize, Arc<Dtype>),
    /// File type (handle, type).
    pub filetype: (usize, Arc<Dtype>),
    /// Data representation.
    pub datarep: Datarep,
}

impl Default for View {
    /// The view a file is opened with: displacement 0, `MPI_BYTE` for both types, `native`.
    fn default() -> View {
        let byte = Arc::new(Dtype::predefined(MPI_BYTE).expect("MPI_BYTE is predefined"));
        View {
            disp: 0,
            etype: (MPI_BYTE, byte.clone()),
            filetype: (MPI_BYTE, byte),
            datarep: Datarep::Native,
        }
    }
}

impl View {
    /// A view after checking the standard's rules: the file type is made of whole etypes,
    /// its data lies at non-negative, nondecreasing offsets, and neither type is empty.
    pub fn new(
        disp: u64,
        etype: (usize, Arc<Dtype>),
        filetype: (usize, Arc<Dtype>),
        datarep: Datarep,
    ) -> MpiResult<View> {
        let (e, f) = (&etype.1, &filetype.1);
        if e.size == 0 {
            return fail(MPI_ERR_TYPE, "the etype holds no data");
        }
        if f.size == 0 || !f.size.is_multiple_of(e.size) {
            return fail(
                MPI_ERR_TYPE,
                format!(
                    "the filetype holds {} bytes, not a positive multiple of the etype's {}",
                    f.size, e.size
                ),
            );
        }
        if f.extent <= 0 {
            return fail(MPI_ERR_TYPE, "the filetype's extent is not positive");
        }
        let mut segs = engine::IovSink::new(usize::MAX);
        engine::walk(&f.prog, 0, 0, f.size, &mut segs);
        let mut last = 0usize;
        for &(at, _) in &segs.iov {
            // `at` is an offset from 0, wrapped when negative.
            if (at as isize) < 0 {
                return fail(
                    MPI_ERR_TYPE,
                    "the filetype has data at a negative displacement",
                );
            }
            if at < last {
                return fail(
                    MPI_ERR_TYPE,
                    "the filetype's displacements decrease (a view must be monotonically \
                     nondecreasing)",
                );
            }
            last = at;
        }
        Ok(View {
            disp,
            etype,
            filetype,
            datarep,
        })
    }

    /// Bytes of one etype.
    pub fn etype_size(&self) -> u64 {
        self.etype.1.size as u64
    }

    /// Whether the view is the whole file from the displacement on (a contiguous file type).
    pub fn contiguous(&self) -> bool {
        let f = &self.filetype.1;
        f.size as isize == f.extent && f.prog.single() == Some((0, f.size))
    }

    /// The file segments `(offset, length)` holding view data bytes `[from, to)`, in view
    /// order, adjacent ones merged.
    pub fn segments(&self, from: u64, to: u64) -> Vec<(u64, usize)> {
        if from >= to {
            return Vec::new();
        }
        if self.contiguous() {
            return vec![(self.disp + from, (to - from) as usize)];
        }
        let f = &self.filetype.1;
        let tiles = (to as usize).div_ceil(f.size);
        let mut s = engine::IovSink::new(usize::MAX);
        engine::walk_n(
            &f.prog,
            f.extent,
            tiles,
            self.disp as usize,
            from as usize,
            to as usize,
            &mut s,
        );
        s.iov.into_iter().map(|(a, l)| (a as u64, l)).collect()
    }

    /// The absolute file offset of view data byte `b` (`MPI_File_get_byte_offset`).
    pub fn byte_offset(&self, b: u64) -> u64 {
        match self.segments(b, b + 1).first() {
            Some(&(at, _)) => at,
            None => self.disp,
        }
    }

    /// View data bytes that lie before file offset `end` (how far into the view the end
    /// of a file of `end` bytes is, for `MPI_SEEK_END`).
    pub fn data_before(&self, end: u64) -> u64 {
        if end <= self.disp {
            return 0;
        }
        let f = &self.filetype.1;
        let rel = end - self.disp;
        if self.contiguous() {
            return rel;
        }
        let ext = f.extent as u64;
        let whole = rel / ext;
        let mut n = whole * f.size as u64;
        // The partial tile: data bytes of one tile below `rel - whole * ext`.
        let cut = rel - whole * ext;
        let mut s = engine::IovSink::new(usize::MAX);
        engine::walk(&f.prog, 0, 0, f.size, &mut s);
        for (at, len) in s.iov {
            let (at, len) = (at as u64, len as u64);
            if at >= cut {
                break;
            }
            n += len.min(cut - at);
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::datatype::derived;

    fn byte() -> (usize, Arc<Dtype>) {
        (MPI_BYTE, Arc::new(Dtype::predefined(MPI_BYTE).unwrap()))
    }

    fn vector(count: usize, block: usize, stride: isize) -> (usize, Arc<Dtype>) {
        let b = Arc::new(Dtype::predefined(MPI_BYTE).unwrap());
        let v = derived::vector_bytes(count, block, stride, &b, Default::default()).unwrap();
        (1, Arc::new(v))
    }

    #[test]
    fn default_view_is_the_file() {
        let v = View::default();
        assert_eq!(v.segments(10, 30), vec![(10, 20)]);
        assert_eq!(v.byte_offset(7), 7);
        assert_eq!(v.data_before(100), 100);
    }

    #[test]
    fn interleaved_view_maps_blocks() {
        // 2 blocks of 4 bytes, stride 12: tile data at 0..4 and 12..16, extent 16.
        let v = View::new(100, byte(), vector(2, 4, 12), Datarep::Native).unwrap();
        assert_eq!(
            v.segments(0, 12),
            vec![(100, 4), (112, 8)],
            "two tiles: the second starts at the extent, adjacent to the first tile's end"
        );
        assert_eq!(v.segments(2, 6), vec![(102, 2), (112, 2)]);
        assert_eq!(v.byte_offset(5), 113);
        // A file of 114 bytes holds data bytes 0..4 and 12..14 of the view: 6.
        assert_eq!(v.data_before(114), 6);
        assert_eq!(v.data_before(132), 16);
        assert_eq!(v.data_before(120), 12);
    }

    #[test]
    fn rules_of_views() {
        let e4 = (
            MPI_INT32_T,
            Arc::new(Dtype::predefined(MPI_INT32_T).unwrap()),
        );
        assert!(View::new(0, e4.clone(), vector(1, 3, 3), Datarep::Native).is_err());
        assert!(View::new(0, e4, vector(2, 4, 8), Datarep::Native).is_ok());
        assert_eq!(
            Datarep::parse("big").unwrap_err().class(),
            MPI_ERR_UNSUPPORTED_DATAREP
        );
    }
}
