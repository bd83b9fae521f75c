//! File views (`MPI_File_set_view`): which bytes of the file a rank sees. The view is a
//! displacement, an elementary type and a file type tiled from the displacement on; a
//! position in the view counts data bytes of that tiling (`etype` units at the C boundary).
//! The file type's compiled layout program maps data bytes to file offsets, the same walk
//! that lists the segments of a memory transfer.

use super::datarep;
use crate::core::datatype::{engine, Dtype};
use crate::core::error::{fail, MpiResult};
use crate::mpi_abi::consts::*;
use std::sync::Arc;

pub use super::datarep::Datarep;

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
    /// File bytes per native data byte (numerator, denominator) when the representation
    /// stores the etype in another size: the view's data is counted in native bytes and its
    /// file segments are scaled (the filetype is then made of etypes, whose displacements
    /// the standard scales to the file representation).
    pub scale: Option<(u64, u64)>,
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
            scale: None,
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
        let scale = scale_of(datarep, e, f, &segs.iov)?;
        Ok(View {
            disp,
            etype,
            filetype,
            datarep,
            scale,
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

    /// The file segments `(offset, length)` holding view data bytes `[from, to)` (native
    /// bytes; the segments hold their file form, scaled when the representation changes
    /// sizes), in view order, adjacent ones merged.
    pub fn segments(&self, from: u64, to: u64) -> Vec<(u64, usize)> {
        let segs = self.native_segments(from, to);
        match self.scale {
            None => segs,
            Some((num, den)) => segs
                .into_iter()
                .map(|(at, len)| {
                    let rel = at - self.disp;
                    (
                        self.disp + rel * num / den,
                        (len as u64 * num / den) as usize,
                    )
                })
                .collect(),
        }
    }

    /// [`View::segments`] as if the data were stored in native sizes.
    fn native_segments(&self, from: u64, to: u64) -> Vec<(u64, usize)> {
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
        // In native sizes, the end of the file is proportionally nearer the displacement.
        let end = match self.scale {
            Some((num, den)) => self.disp + (end - self.disp) * den / num,
            None => end,
        };
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

/// The scale of a view in `rep` with etype `e` and filetype `f` (whose data segments from 0
/// are `segs`): `None` when the etype keeps its size in the file, else (file, native) bytes
/// of one etype. A representation that changes sizes needs a filetype the standard calls
/// portable (built from the etype by contiguous, vector, indexed, indexed-block, subarray
/// or darray constructors, whose displacements count whole etypes and so scale); byte
/// displacements (hvector, struct, resized, ...) would not scale, and are refused.
fn scale_of(
    rep: Datarep,
    e: &Dtype,
    f: &Dtype,
    segs: &[(usize, usize)],
) -> MpiResult<Option<(u64, u64)>> {
    if !rep.converts() {
        return Ok(None);
    }
    let (file_e, native_e) = (datarep::file_size(rep, e)?, e.size);
    let file_f = datarep::file_size(rep, f)?;
    let whole = |x: usize| x.is_multiple_of(native_e);
    let fits = file_f as u128 * native_e as u128 == f.size as u128 * file_e as u128
        && (file_e == native_e
            || (portable(f)
                && whole(f.extent as usize)
                && segs.iter().all(|&(at, len)| whole(at) && whole(len))));
    if !fits {
        return fail(
            MPI_ERR_UNSUPPORTED_DATAREP,
            format!(
                "data representation \"{}\" stores the etype in {file_e} bytes instead of \
                 {native_e}: the filetype must then be made of etypes with a portable \
                 constructor (contiguous, vector, indexed, indexed_block, subarray, darray)",
                rep.name()
            ),
        );
    }
    Ok((file_e != native_e).then_some((file_e as u64, native_e as u64)))
}

/// Whether `t` is built from predefined types by constructors whose displacements count
/// elements of their old type (the standard's portable datatypes).
fn portable(t: &Dtype) -> bool {
    let c = &t.contents;
    matches!(
        c.combiner,
        MPI_COMBINER_NAMED
            | MPI_COMBINER_DUP
            | MPI_COMBINER_CONTIGUOUS
            | MPI_COMBINER_VECTOR
            | MPI_COMBINER_INDEXED
            | MPI_COMBINER_INDEXED_BLOCK
            | MPI_COMBINER_SUBARRAY
            | MPI_COMBINER_DARRAY
            | MPI_COMBINER_F90_REAL
            | MPI_COMBINER_F90_COMPLEX
            | MPI_COMBINER_F90_INTEGER
    ) && c.types.iter().all(|k| portable(k))
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

    #[test]
    fn size_changing_representations_scale_portable_views() {
        use crate::core::datatype::Contents;
        let long = Arc::new(Dtype::predefined(MPI_LONG).unwrap());
        let vector = |combiner| {
            let c = Contents {
                combiner,
                types: vec![long.clone()],
                ..Default::default()
            };
            // Longs 0 and 3 of every 4 (stride 3 longs, extent 4 longs when tiled).
            let v = derived::vector_bytes(2, 1, 24, &long, c).unwrap();
            let v = derived::resized(&Arc::new(v), 0, 32, Contents::default()).unwrap();
            Arc::new(v)
        };
        // external32 stores a long in 4 bytes: offsets and lengths halve.
        let e = (MPI_LONG, long.clone());
        let f = vector(MPI_COMBINER_VECTOR);
        let resized_is_not_portable = View::new(100, e.clone(), (1, f), Datarep::External32);
        assert_eq!(
            resized_is_not_portable.unwrap_err().class(),
            MPI_ERR_UNSUPPORTED_DATAREP
        );
        let v = View::new(100, e.clone(), (1, f_plain(&long)), Datarep::External32).unwrap();
        assert_eq!(v.scale, Some((4, 8)));
        // Data bytes 0..32 (4 longs) of a vector of 2 longs at stride 3 (extent 4 longs):
        // longs 0, 3 (first tile), 4, 7 (second tile); in the file 4 bytes each.
        assert_eq!(v.segments(0, 32), vec![(100, 4), (112, 8), (128, 4)]);
        assert_eq!(v.byte_offset(8), 112);
        // A 118-byte file ends in the middle of file long 4: longs 0, 3 and half of 4 (20
        // native bytes) lie before it.
        assert_eq!(v.data_before(118), 20);
        // The same view in native sizes is not scaled.
        let n = View::new(100, e, (1, f_plain(&long)), Datarep::Native).unwrap();
        assert_eq!(n.scale, None);
        assert_eq!(n.segments(0, 16), vec![(100, 8), (124, 8)]);
    }

    /// A vector of 2 longs at a stride of 3 longs, built as `MPI_Type_vector` records it.
    fn f_plain(long: &Arc<Dtype>) -> Arc<Dtype> {
        let c = crate::core::datatype::Contents {
            combiner: MPI_COMBINER_VECTOR,
            types: vec![long.clone()],
            ..Default::default()
        };
        Arc::new(derived::vector_bytes(2, 1, 24, long, c).unwrap())
    }
}
