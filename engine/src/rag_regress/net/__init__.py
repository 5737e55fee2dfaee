"""What the engine sends to and reads from other machines, and what it must never show.

redact  the secrets the settings name (API keys, tokens), removed from every text the
        engine prints or writes, in every form a server may echo them
http    one HTTP request with a deadline on the whole of it, no redirect followed, a
        capped reply
parse   JSON read with a nesting limit (a reply of "[" * 1,000,000 is an error, not a crash)
"""
