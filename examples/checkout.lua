-- Loaded by examples/seeds/*.lua and examples/recipes/*.lua as
--   local perf, root = dofile(arg[0]:match("^(.-)[^/]*$") .. "../checkout.lua")
-- so that `lua5.4 examples/seeds/NAME.lua` (or luajit) runs from a checkout
-- after `make` without LUA_PATH: the module is found beside this file
-- (lua/ and build/, or build/luajit/ under LuaJIT), ahead of any installed one.
local here = debug.getinfo(1, "S").source:match("^@(.-)[^/]*$")
local root = (here == "" and "." or here:gsub("/$", "")) .. "/.."
package.path = root .. "/lua/?.lua;" .. root .. "/lua/?/init.lua;" .. package.path
package.cpath = root .. (jit and "/build/luajit/?.so;" or "/build/?.so;") .. package.cpath
return require "perf", root
