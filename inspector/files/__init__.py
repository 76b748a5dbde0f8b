"""Files the person reads and writes: settings and recent files, saving and exporting (never over an
open file, always atomically)."""
