"""The native model's C sources (cache.c, mmu.c, hash64.c, softtlb.c, hooks.c, one header),
compiled into the extension ``emu._model`` when the project is installed; see emu.hw.native."""
