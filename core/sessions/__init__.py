"""Agent sessions: the model calls of one trace or transcript in order, what changed from each call to
the next of its conversation, and what a prompt cache could keep (no Qt).

    from core.sessions import open_session
    session = open_session("trace.json", make_counter())
    for call, diff in zip(session.calls, session.diffs):
        print(call.index, call.input_tokens, diff and diff.prefix_tokens)
"""
from .build import open_session, session_from_import
from .diffing import message_key
from .model import (APPENDED, COMPACTED, INSERTED, REMOVED, REWRITTEN, TOOLS, CallDiff, Change, Session,
                    SessionCall)
from .tokens import SessionTokens, common_prefix

__all__ = ["open_session", "session_from_import", "message_key", "Session", "SessionCall", "CallDiff", "Change",
           "SessionTokens", "common_prefix", "APPENDED", "INSERTED", "REMOVED", "REWRITTEN", "COMPACTED", "TOOLS"]
