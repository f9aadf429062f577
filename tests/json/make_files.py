"""Inputs of tests/tests/json.rs, written with the Python clients users have:

- all.nc      netCDF4-python, netCDF-4: every atomic type (extremes, fill values, NaN and
              infinities), char and string (non-ASCII), an unlimited dimension with a partly
              written record, enum / vlen / nested compound, groups, attributes of every atomic type
- classic.nc  netCDF4-python, NETCDF3_CLASSIC, with a record dimension and NaN
- cdf5.nc     netCDF4-python, NETCDF3_64BIT_DATA: the unsigned and 64-bit types
- nonutf8.h5  h5py: string and char values whose bytes are not UTF-8
- store.zarr  zarr-python 3, a Zarr v3 store
Run in the directory that receives them.
"""
import h5py
import netCDF4
import numpy as np
import zarr

INTS = {'b': 'i1', 'ub': 'u1', 'sh': 'i2', 'us': 'u2', 'i': 'i4', 'ui': 'u4', 'l': 'i8', 'ul': 'u8'}
REALS = {'f': 'f4', 'd': 'f8'}


def all_nc():
    ds = netCDF4.Dataset('all.nc', 'w', format='NETCDF4')
    ds.createDimension('t', None)
    ds.createDimension('x', 3)
    ds.createDimension('l', 5)
    for name, dt in {**INTS, **REALS}.items():
        if dt[0] in 'iu':
            info = np.iinfo(dt)
            v = ds.createVariable(name, dt, ('t', 'x'), fill_value=info.max)
            v[0:2, :] = np.array([[info.min, 0, info.max], [1, info.max, 2]], dtype=dt)
        else:
            info = np.finfo(dt)
            v = ds.createVariable(name, dt, ('t', 'x'))
            v[0:2, :] = np.array([[np.nan, np.inf, -np.inf], [0.1, -0.0, info.max]], dtype=dt)
        v.att_two = np.array([1, 2], dtype=dt)
        v.att_one = np.array([info.max], dtype=dt)
        v.att_min = np.array([info.min], dtype=dt)
    # a third record written only in part: default fill values around it
    ds['f'][2, 1] = 1.5
    ds['d'].setncattr('nan_att', np.array([np.nan, -np.inf], 'f8'))
    ds['f'].setncattr('tiny', np.array([1e-45, 0.1, 16777217.0], 'f4'))
    c = ds.createVariable('c', 'S1', ('x', 'l'))
    c[:] = np.frombuffer(b'ab\0\0\0' + 'h\u00e9ll'.encode() + b'a\0b\0\0', 'S1').reshape(3, 5)
    c0 = ds.createVariable('c0', 'S1', ())
    c0[...] = b'q'
    s = ds.createVariable('s', str, ('x',))
    s[0] = 'caf\u00e9'
    s[1] = '\u65e5\u672c "quoted" \\ \n\t'
    s[2] = ''
    ds.title = 'plain text'
    ds.setncattr_string('strs', ['a', 'b\u00e9'])
    ds.dbl = np.array([1.0, 2.5])
    ds.one_int = np.int32(-7)
    ds.ints = np.array([1, 2, 3], 'i4')
    ds.i64 = np.array([2**62 + 1, -2**63], 'i8')
    et = ds.createEnumType(np.int16, 'color', {'red': -1, 'green': 0, 'blue': 7})
    e = ds.createVariable('e', et, ('x',), fill_value=7)
    e[:] = np.array([-1, 0, 7], 'i2')
    vt = ds.createVLType(np.int32, 'ivlen')
    vv = ds.createVariable('vl', vt, ('x',))
    vv[0] = np.array([1, 2, 3], 'i4')
    vv[1] = np.array([], 'i4')
    vv[2] = np.array([-5], 'i4')
    inner = np.dtype([('a', 'i2'), ('b', 'f8')])
    ds.createCompoundType(inner, 'inner_t')
    outer = np.dtype([('id', 'i8'), ('xy', 'f4', (2,)), ('in', inner), ('tag', 'S1', (4,))])
    ot = ds.createCompoundType(outer, 'outer_t')
    cv = ds.createVariable('cmp', ot, ('x',))
    data = np.zeros(3, outer)
    data['id'] = [2**62 + 1, -1, 0]
    data['xy'] = [[1.5, np.nan], [0, 1e30], [-1, 2]]
    data['in']['a'] = [1, 2, 3]
    data['in']['b'] = [0.25, -0.5, 1e300]
    data['tag'] = np.frombuffer(b'ab\0\0' + b'wxyz' + b'\0\0\0\0', 'S1').reshape(3, 4)
    cv[:] = data
    g = ds.createGroup('g')
    g.createDimension('y', 2)
    g.createDimension('x', 1)
    gv = g.createVariable('gv', 'u8', ('y', 'x'))
    gv[:] = np.array([[2**64 - 1], [2**63]], 'u8')
    gv.note = 'in a group'
    h = g.createGroup('h')
    hv = h.createVariable('hv', 'f8', ())
    hv[...] = 3.25
    he = h.createVariable('he', et, ())
    he[...] = np.int16(0)
    ds.close()


def classic_nc():
    ds = netCDF4.Dataset('classic.nc', 'w', format='NETCDF3_CLASSIC')
    ds.createDimension('time', None)
    ds.createDimension('x', 2)
    ds.createDimension('len', 4)
    t = ds.createVariable('time', 'f8', ('time',))
    t.units = 'days since 2000-01-01'
    t[:] = [0.5, 1.5, 2.5]
    v = ds.createVariable('v', 'f4', ('time', 'x'), fill_value=-999.0)
    v[:] = np.array([[1, np.nan], [np.inf, -999], [3, 4]], 'f4')
    v.valid_range = np.array([-10, 10], 'i2')
    b = ds.createVariable('b', 'i1', ('x',))
    b[:] = [-128, 127]
    n = ds.createVariable('name', 'S1', ('x', 'len'))
    n[:] = np.frombuffer(b'abcdxy\0\0', 'S1').reshape(2, 4)
    ds.Conventions = 'CF-1.8'
    ds.close()


def cdf5_nc():
    ds = netCDF4.Dataset('cdf5.nc', 'w', format='NETCDF3_64BIT_DATA')
    ds.createDimension('x', 2)
    for name, dt in INTS.items():
        info = np.iinfo(dt)
        v = ds.createVariable(name, dt, ('x',))
        v[:] = np.array([info.min, info.max], dt)
        v.extreme = np.array([info.max], dt)
    ds.close()


def nonutf8_h5():
    with h5py.File('nonutf8.h5', 'w') as f:
        f.create_dataset('s', data=np.array([b'ab\xff\xfe', b'\xe9t\xe9'], dtype='S4'))
        f.attrs['bad'] = np.bytes_(b'caf\xe9')
        f.create_dataset('vs', data=[b'x\xffy', b'ok'], dtype=h5py.string_dtype('ascii'))


def store_zarr():
    g = zarr.open_group('store.zarr', mode='w', zarr_format=3)
    g.attrs['title'] = 'zarr v3 store'
    a = g.create_array('temp', shape=(2, 3), chunks=(1, 2), dtype='f4', fill_value=np.nan,
                       dimension_names=['y', 'x'])
    a[:] = np.array([[1.5, np.nan, -np.inf], [0.1, 2, 3]], 'f4')
    a.attrs['units'] = 'K'
    b = g.create_array('count', shape=(3,), chunks=(2,), dtype='i8', fill_value=-1,
                       dimension_names=['x'])
    b[:] = [2**62 + 1, -5, 7]
    u = g.create_array('u', shape=(3,), chunks=(3,), dtype='u8', fill_value=0,
                       dimension_names=['x'])
    u[:] = [2**64 - 1, 1, 2]


all_nc()
classic_nc()
cdf5_nc()
nonutf8_h5()
store_zarr()
