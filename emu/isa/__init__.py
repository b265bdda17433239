"""The instruction sets: GNU-style assembly source to bytes through keystone (run in worker
processes with a time limit), and bytes back to instructions through capstone, for PowerPC
(32 and 64 bit), ARMv7 and x86. The bottom layer: it uses nothing else of emu but
``emu.context``."""
