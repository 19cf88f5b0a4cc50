//! Block devices and online filesystem growth: positioned reads and writes, the kernel's
//! view of a disk (BLKGETSIZE64, BLKSSZGET), telling it a partition grew (BLKPG), and the
//! three filesystems' grow ioctls. ioctl numbers and structures are from
//! <linux/fs.h>, <linux/blkpg.h>, <xfs/xfs_fs.h> and <linux/btrfs.h>; see ioctl(2).

use core::ffi::c_void;

use rustix::fd::AsFd;
use rustix::io::Errno;
use rustix::ioctl::{self, opcode, Getter, Opcode, Setter};

const BLKSSZGET: Opcode = opcode::none(0x12, 104);
const BLKPG: Opcode = opcode::none(0x12, 105);
const BLKGETSIZE64: Opcode = opcode::read::<u64>(0x12, 114);
const BLKPG_RESIZE_PARTITION: i32 = 3;

#[repr(C)]
struct BlkpgPartition {
    start: i64,
    length: i64,
    pno: i32,
    devname: [u8; 64],
    volname: [u8; 64],
}

#[repr(C)]
struct BlkpgIoctlArg {
    op: i32,
    flags: i32,
    datalen: i32,
    data: *mut c_void,
}

/// ioctl(BLKGETSIZE64): the device's size in bytes.
pub fn size_bytes<Fd: AsFd>(device: Fd) -> Result<u64, Errno> {
    // SAFETY: BLKGETSIZE64 writes one u64 through its argument.
    unsafe { ioctl::ioctl(device, Getter::<BLKGETSIZE64, u64>::new()) }
}

/// ioctl(BLKSSZGET): the logical sector size, the unit of partition tables.
pub fn logical_sector_size<Fd: AsFd>(device: Fd) -> Result<u32, Errno> {
    // SAFETY: BLKSSZGET writes one int through its argument.
    let size = unsafe { ioctl::ioctl(device, Getter::<BLKSSZGET, i32>::new())? };
    u32::try_from(size).map_err(|_| Errno::INVAL)
}

/// ioctl(BLKPG, BLKPG_RESIZE_PARTITION): tells the kernel partition `number` of the disk
/// now spans `length` bytes from `start` (the start cannot move). Unlike BLKRRPART this
/// works while the partition is mounted.
pub fn resize_partition<Fd: AsFd>(disk: Fd, number: u32, start: u64, length: u64) -> Result<(), Errno> {
    let mut partition = BlkpgPartition {
        start: i64::try_from(start).map_err(|_| Errno::INVAL)?,
        length: i64::try_from(length).map_err(|_| Errno::INVAL)?,
        pno: i32::try_from(number).map_err(|_| Errno::INVAL)?,
        devname: [0; 64],
        volname: [0; 64],
    };
    let arg = BlkpgIoctlArg {
        op: BLKPG_RESIZE_PARTITION,
        flags: 0,
        datalen: core::mem::size_of::<BlkpgPartition>() as i32,
        data: (&mut partition as *mut BlkpgPartition).cast(),
    };
    // SAFETY: BLKPG reads a blkpg_ioctl_arg whose data points to a blkpg_partition of
    // `datalen` bytes; both live until the call returns.
    unsafe { ioctl::ioctl(disk, Setter::<BLKPG, BlkpgIoctlArg>::new(arg)) }
}

/// pread(2) until `buf` is full; the end of the device first is an I/O error.
pub fn read_at<Fd: AsFd>(device: Fd, offset: u64, buf: &mut [u8]) -> Result<(), Errno> {
    let mut done = 0;
    while done < buf.len() {
        match rustix::io::pread(&device, &mut buf[done..], offset + done as u64) {
            Ok(0) => return Err(Errno::IO),
            Ok(n) => done += n,
            Err(Errno::INTR) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// pwrite(2) until all of `bytes` is written.
pub fn write_at<Fd: AsFd>(device: Fd, offset: u64, bytes: &[u8]) -> Result<(), Errno> {
    let mut done = 0;
    while done < bytes.len() {
        match rustix::io::pwrite(&device, &bytes[done..], offset + done as u64) {
            Ok(0) => return Err(Errno::IO),
            Ok(n) => done += n,
            Err(Errno::INTR) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// fsync(2): the writes so far are on the disk.
pub fn sync<Fd: AsFd>(device: Fd) -> Result<(), Errno> {
    rustix::fs::fsync(device)
}

/// fstat(2) size: the length of a disk image file.
pub fn file_size<Fd: AsFd>(file: Fd) -> Result<u64, Errno> {
    Ok(rustix::fs::fstat(file)?.st_size as u64)
}

/// fstatfs(2) f_bsize: the block size of the filesystem holding `file`.
pub fn filesystem_block_size<Fd: AsFd>(file: Fd) -> Result<u64, Errno> {
    Ok(rustix::fs::fstatfs(file)?.f_bsize as u64)
}

/// ioctl(EXT4_IOC_RESIZE_FS): grows the mounted ext4 filesystem holding `file` to
/// `blocks` blocks. Needs CAP_SYS_RESOURCE.
pub fn ext4_resize<Fd: AsFd>(file: Fd, blocks: u64) -> Result<(), Errno> {
    rustix::fs::ext4_ioc_resize_fs(file, blocks)
}

/// struct xfs_fsop_geom_v1: the fields wisp reads, at their offsets.
#[repr(C)]
#[derive(Clone, Copy)]
struct XfsGeometryV1 {
    blocksize: u32,
    rtextsize: u32,
    agblocks: u32,
    agcount: u32,
    logblocks: u32,
    sectsize: u32,
    inodesize: u32,
    imaxpct: u32,
    datablocks: u64,
    rest: [u8; 72],
}

#[repr(C)]
struct XfsGrowfsData {
    newblocks: u64,
    imaxpct: u32,
}

const XFS_IOC_FSGEOMETRY_V1: Opcode = opcode::read::<XfsGeometryV1>(b'X', 100);
const XFS_IOC_FSGROWFSDATA: Opcode = opcode::write::<XfsGrowfsData>(b'X', 110);

/// ioctl(XFS_IOC_FSGEOMETRY_V1): (block size, data blocks, imaxpct).
pub fn xfs_geometry<Fd: AsFd>(file: Fd) -> Result<(u32, u64, u32), Errno> {
    // SAFETY: the v1 geometry ioctl fills a struct xfs_fsop_geom_v1 (112 bytes).
    let geometry = unsafe { ioctl::ioctl(file, Getter::<XFS_IOC_FSGEOMETRY_V1, XfsGeometryV1>::new())? };
    Ok((geometry.blocksize, geometry.datablocks, geometry.imaxpct))
}

/// ioctl(XFS_IOC_FSGROWFSDATA): grows the mounted xfs data section to `blocks` blocks,
/// keeping the inode space limit.
pub fn xfs_grow<Fd: AsFd>(file: Fd, blocks: u64, imaxpct: u32) -> Result<(), Errno> {
    let data = XfsGrowfsData { newblocks: blocks, imaxpct };
    // SAFETY: FSGROWFSDATA reads a struct xfs_growfs_data.
    unsafe { ioctl::ioctl(file, Setter::<XFS_IOC_FSGROWFSDATA, XfsGrowfsData>::new(data)) }
}

#[repr(C)]
struct BtrfsVolArgs {
    fd: i64,
    name: [u8; 4088],
}

const BTRFS_IOC_RESIZE: Opcode = opcode::write::<BtrfsVolArgs>(0x94, 3);

/// ioctl(BTRFS_IOC_RESIZE, "max"): grows device 1 of the mounted btrfs holding
/// `directory` to the size of its block device.
pub fn btrfs_resize_max<Fd: AsFd>(directory: Fd) -> Result<(), Errno> {
    let mut args = BtrfsVolArgs { fd: 0, name: [0; 4088] };
    args.name[..5].copy_from_slice(b"1:max");
    // SAFETY: BTRFS_IOC_RESIZE reads a struct btrfs_ioctl_vol_args (4096 bytes).
    unsafe { ioctl::ioctl(directory, Setter::<BTRFS_IOC_RESIZE, BtrfsVolArgs>::new(args)) }
}
