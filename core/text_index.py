"""Where a text is written in one long text, from every place on, without scanning to its end each time.

The variant counts ask, for message after message, whether its text is written at one place only from a cursor
on (``hf_variants._only_place``). A scan with ``str.find`` that finds one place must go on to the end to know
there is no second: once per message, a quadratic over a long request (1.8 s of ``find`` at 2,000 tool-call
turns). ``Occurrences`` samples the long text every ``STEP`` characters and files each sample under the ``KEY``
characters written from there. A place ``p`` where a needle of at least ``STEP + KEY - 1`` characters is written
holds a sample at ``p + j`` for ``j = -p mod STEP``, whose key is ``needle[j:j + KEY]``: looking up that key for
each ``j`` below ``STEP`` gives every such place, each confirmed by comparing the needle there. A needle too short
for that, or whose keys are written too often, is left to the caller's scan (``None``).

``Finder`` is ``str.find`` over one long text for many needles, built on it: each needle is looked for near where
it is asked from first, then in the index, which is made only once scans to the text's end have cost about what
making it costs."""
from __future__ import annotations

from array import array

STEP = 16  # a sample every STEP characters
KEY = 16  # each filed under the KEY characters from there
MOST_CANDIDATES = 64  # samples looked at for one needle before it is left to a scan
TRIES = 4  # keys of one residue looked up (the one filed least often is taken)
NEAR = 4096  # characters after the start a needle is looked for in before the index is asked (``Finder``)
INDEX_AFTER = 64  # the text's length scanned, this many times over, before it is indexed (``Finder``: making the
# index costs about as much)


_SLICES = [slice(shift, shift + KEY) for shift in range(STEP * TRIES)]  # the keys a lookup reads of its needle


class Occurrences:
    """The samples of one long text, filed by their keys' hashes in arrays (a chained table: about 20 bytes a sample,
    a little more than the text's own size, where a dict of key strings and lists of places held about 4 times it),
    each place confirmed in the text."""

    def __init__(self, text: str):
        self.text = text
        count = max(len(text) - KEY + 1, 0)
        count = (count + STEP - 1) // STEP  # samples at 0, STEP, 2 * STEP, ...
        size = 1 << max(count * 2 - 1, 1).bit_length()  # buckets: a power of two, at least twice the samples
        self._mask = size - 1
        heads = array("i", [-1]) * size  # each bucket's newest sample (its chain runs to older ones: places fall)
        chain = array("i", [-1]) * count
        starts = range(0, count * STEP, STEP)  # (the keys' hashes taken in C: no Python step per sample for them)
        hashes = array("q", map(hash, map(text.__getitem__, map(slice, starts, range(KEY, count * STEP + KEY, STEP)))))
        mask = self._mask
        for j, h in enumerate(hashes):
            b = h & mask
            chain[j] = heads[b]
            heads[b] = j
        self._heads, self._chain, self._hashes = heads, chain, hashes

    def places(self, needle: str, start: int, most: int) -> list[int] | None:
        """The first ``most`` places at or after ``start`` (at least 0: not counted from the end, as ``str.find``
        counts a negative one) where ``needle`` is written, in order (fewer where it is written fewer times);
        ``None`` where the index cannot tell (the caller scans)."""
        n = len(needle)
        if n < STEP + KEY - 1:
            return None
        text, budget, found = self.text, MOST_CANDIDATES, []
        heads, chain, hashes, mask = self._heads, self._chain, self._hashes, self._mask
        last = min(n - KEY, STEP * TRIES - 1)  # the keys looked up: those from the needle's first STEP * TRIES places
        keys = list(map(hash, map(needle.__getitem__, _SLICES[:last + 1])))  # (hashed in C, all at once)
        for j in range(STEP):  # the places p with p + j a sample (p = -j mod STEP)
            best = None
            for shift in range(j, last + 1, STEP):  # any sample inside will do
                # the places from ``start`` on of the samples whose key hashes as this one does, newest first
                h = keys[shift]
                i = heads[h & mask]
                least = (start + shift + STEP - 1) // STEP
                if i < least:  # (a chain runs from its newest sample to older ones: none from ``start`` on)
                    best = ()
                    break
                filed = []
                while i >= least:
                    if hashes[i] == h:
                        if len(filed) == budget:
                            filed = None
                            break
                        filed.append(i * STEP - shift)
                    i = chain[i]
                if filed is not None and (best is None or len(filed) < len(best)):
                    best = filed
                    if len(filed) < 2:  # (one place costs one comparison: less than looking up another key)
                        break
            if not best:
                if best is None:  # more than the budget left under every key looked up
                    return None
                continue
            budget -= len(best)
            found += [p for p in best if text.startswith(needle, p)]
        found.sort()
        return found[:most]


class Finder:
    """``text.find(needle, start)`` for many needles in one long text, the same answer for every input: a needle is
    looked for in the ``NEAR`` characters after ``start`` first (where the text being located usually is), then in
    the text's ``Occurrences``, made once scans to the text's end have cost ``INDEX_AFTER`` times its length (a short
    text, or one whose needles are all found near, is never indexed), else scanned for. A text looked for message
    after message where it is not written (a reply whose reasoning the template leaves out) is then not scanned for
    to the end of a long render each time."""

    def __init__(self, text: str):
        self.text = text
        self._index: Occurrences | None = None
        self._scanned = 0
        # answers looked for past the near window, by needle: where it was not written from on (the least such start),
        # and the last place found with the start it was looked for from (every start between them finds that place)
        self._absent: dict[str, int] = {}
        self._found: dict[str, tuple[int, int]] = {}

    def find(self, needle: str, start: int = 0) -> int:
        text = self.text
        if start < 0:  # (counted from the end, as ``str.find`` counts it)
            return text.find(needle, start)
        end = start + NEAR + len(needle)
        found = text.find(needle, start, end)
        if found >= 0 or end >= len(text):
            return found
        absent = self._absent.get(needle)
        if absent is not None and start >= absent:  # (not written from an earlier start: nor from this one)
            return -1
        known = self._found.get(needle)
        if known is not None and known[0] <= start <= known[1]:  # (the first place from there is this one's too)
            return known[1]
        places = self.places(needle, start, 1)
        if places is None:
            self._scanned += len(text) - start
            found = text.find(needle, start)
        else:
            found = places[0] if places else -1
        if found < 0:
            self._absent[needle] = start if absent is None else min(absent, start)
        else:
            self._found[needle] = (start, found)
        return found

    def places(self, needle: str, start: int, most: int) -> list[int] | None:
        """``Occurrences.places`` in the text once it is indexed; ``None`` (the caller scans) before, or where the index
        cannot tell."""
        if self._index is None:
            if self._scanned < INDEX_AFTER * len(self.text):
                return None
            self._index = Occurrences(self.text)
        return self._index.places(needle, start, most)
