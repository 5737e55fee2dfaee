"""Known hallucinations and faithful paraphrases, shared by the tests of every judge.

Contexts are short help-centre passages written for these tests (not the demo corpus), so
the cases stay valid whatever a team does to evals/.
"""

from __future__ import annotations

REFUNDS = (
    "Monthly subscriptions are not refunded for partial months; when you cancel, you keep "
    "access until the end of the current billing period. Annual plans can be refunded in full "
    "within 30 days of purchase or renewal, and after that no refund is given for the remaining "
    "months. Approved refunds reach your original payment method within 5 to 10 business days."
)
SSO = (
    "Tidemark supports SSO through SAML 2.0 on the Business and Enterprise plans, with tested "
    "setups for Okta, Microsoft Entra ID and Google Workspace. Owners always keep a password "
    "fallback in case the identity provider is down."
)
PASSWORDS = (
    "On the sign-in page, click Forgot password. We send a reset link that expires after "
    "60 minutes; check your spam folder if it hasn't arrived within 5 minutes. New passwords "
    "must be at least 12 characters long and cannot match any of your last 5 passwords."
)
SEATS = (
    "On the Team and Business plans you pay for each active member. Guests who can only view "
    "reports don't use a seat, up to 10 free guests per workspace."
)
MOBILE = (
    "The Tidemark app for iOS 16 or later and Android 10 or later lets you run the timer from "
    "your phone. If you lose signal, the app stores up to 500 entries offline and syncs them "
    "when you reconnect."
)
TRIAL = (
    "Every new workspace starts with a 14-day free trial of the Business plan, and no credit "
    "card is needed to sign up."
)

# The seed's example: the faithful sentence and the same sentence with 30 -> 60 days.
REFUND_FAITHFUL = ("Annual plans can be refunded in full within 30 days of purchase.", REFUNDS)
REFUND_60_DAYS = ("Annual plans can be refunded in full within 60 days of purchase.", REFUNDS)

# (kind, claim, context): each must be judged unsupported.
HALLUCINATIONS = [
    ("number change", *REFUND_60_DAYS),
    ("entity swap", "Tidemark supports SSO through SAML 2.0 with tested setups for Okta and OneLogin.", SSO),
    ("negation flip", "Monthly subscriptions are refunded for partial months.", REFUNDS),
    ("negation flip", "Guests who can only view reports use a seat.", SEATS),
    ("unit change", "We send a reset link that expires after 60 hours.", PASSWORDS),
    ("unit change", "New passwords must be at least 12 words long.", PASSWORDS),
    ("invented feature", "Tidemark also offers a desktop app for Linux.", MOBILE),
    ("invented feature", "The app stores up to 500 entries offline and can export them to PDF.", MOBILE),
    ("wrong plan name", "Tidemark supports SSO through SAML 2.0 on the Team plan.", SSO),
    ("wrong plan name", "Every new workspace starts with a 14-day free trial of the Enterprise plan.", TRIAL),
    ("date", "Approved refunds reach your original payment method every Monday.", REFUNDS),
]

# (kind, claim, context): each must be judged supported.
FAITHFUL = [
    ("faithful", *REFUND_FAITHFUL),
    ("reordered", "Within 30 days of purchase or renewal, annual plans can be refunded in full.", REFUNDS),
    ("shortened", "Partial months of monthly subscriptions are not refunded.", REFUNDS),
    ("number word", "The password reset link expires after sixty minutes.", PASSWORDS),
    ("contraction", "Guests who only view reports don't use a seat.", SEATS),
    ("negation kept", "No credit card is needed for the 14-day free trial.", TRIAL),
    (
        "inflection",
        "Refunds that are approved reach the original payment method within 5 to 10 business days.",
        REFUNDS,
    ),
    ("two sentences", "SSO via SAML 2.0 works with Okta, and owners keep a password fallback.", SSO),
]

ROLES = (
    "Owners invite admins from Settings > Members, and admins approve the timesheets that "
    "members submit. Admins see more reports than members."
)
PLANS = (
    "Business costs $20 per seat per month and Team costs $12 per seat per month. Exports "
    "hold up to 100,000 rows, and files larger than 500 MB are rejected. Reports can be "
    "scheduled daily or weekly, and every report must have an owner."
)
SYNC = (
    "The desktop app syncs with the web app every 90 minutes. You can enable offline mode "
    "under Preferences, which keeps your entries on the device."
)

ARCHIVE = (
    "Archived projects disappear from the timer and timesheet pickers, but all their entries stay "
    "in reports. Approved weeks are locked, so entries can't be edited until an admin unlocks them."
)
RATES = (
    "Each API key can make 100 requests per minute on Team, 300 per minute on Enterprise, and 30 on "
    "Solo. When an API key goes over the limit, the API returns HTTP 429."
)
TIMERS = (
    "Only one timer can run at a time, so starting a new one stops the current timer. "
    "Archiving a client archives all of its projects at once."
)
RATES_LEVELS = (
    "Rates can be set for the workspace, a client, a project and a member, and the most specific "
    "rate wins, so a member's rate on a project overrides the project rate."
)
ROUNDING = "Rounding only changes how durations appear in reports; the original entry is always kept."
VAT = "Tidemark charges VAT at your local rate unless you provide a valid VAT number."
ALLOWLIST = "Requests from any other IP address are blocked in the web app and the mobile apps."
SUGGESTIONS = "Each calendar event appears as a suggestion, and nothing is tracked until you accept it."
IDLE_LIMIT = "You can set the idle limit to no more than 24 hours."
IDLE_RANGE = "Owners can set the idle limit anywhere between 15 minutes and 24 hours in Settings."
SESSIONS = "Owners on the Business and Enterprise plans can set the idle limit under Settings > Security."
PAST_ENTRIES = "You can add entries up to 60 days in the past unless those weeks have already been approved."
PREVIEW = "Tidemark previews 20 rows of each import before it starts."
REMINDER = "Members can get a Slack reminder at 17:00 if they have tracked less than their daily hours."
OWNERS = "A workspace must always have at least one Owner, who controls billing."
RETENTION = (
    "After a workspace is cancelled it stays read-only for 30 days, and then all of its data is deleted."
)
ONE_TIMER = (
    "You can edit the description while the timer is running. Only one timer can run at a time, "
    "so starting a new one stops the current timer."
)
ENFORCE = (
    "Once SSO is verified you can switch on Enforce SSO, so members can no longer sign in with a password."
)
OFFLINE = "If you lose signal, the app keeps tracking and syncs your entries when you reconnect."
PRICES = "Solo is $9 per month, Team is $12 per seat per month, and Business is $20 per seat per month."
TRIAL_END = (
    "When the trial ends, choose a plan under Settings > Billing; if you don't, the workspace becomes "
    "read-only for 30 days."
)
JIRA = "Tidemark writes tracked time back to Jira as worklogs once the timesheet is approved."
CODES = "Enter one of the backup codes you saved during setup; each one works only once."
CALENDAR_ACCESS = (
    "Tidemark reads events from the past 30 days and the next 7 days and only asks for read access."
)
RATE_CHANGE = (
    "A rate change applies to new entries only, unless you tick Apply to past entries and choose a "
    "start date."
)
BUDGET = "When tracked time reaches 80% and 100% of the budget, project managers get an email alert."

# (kind, context, the hallucination, its faithful paraphrase): each kind both ways. The judge
# must call the first unsupported and the second supported, and so must the guard under any
# judge, however sure that judge is (test_judges.py checks both).
KINDS = [
    (
        "numbers",
        PASSWORDS,
        "New passwords must be at least 10 characters long.",
        "A new password needs twelve characters or more.",
    ),
    (
        "units",
        SYNC,
        "The desktop app syncs with the web app every 90 hours.",
        "Every hour and a half, the desktop app syncs with the web app.",
    ),
    ("data units", PLANS, "Files larger than 500 GB are rejected.", "Files bigger than 500MB are rejected."),
    (
        "dates",
        REFUNDS,
        "Approved refunds reach your original payment method every Friday.",
        "Approved refunds are paid back to the original payment method within 5 to 10 business days.",
    ),
    (
        "negation",
        REFUNDS,
        "Monthly subscriptions are refunded for partial months.",
        "No refund is given for partial months of a monthly subscription.",
    ),
    (
        "antonym",
        SYNC,
        "You can disable offline mode under Preferences.",
        "Offline mode can be turned on under Preferences.",
    ),
    (
        "antonym negated",
        SEATS,
        "Guests who can only view reports use a seat.",
        "Guests who can only view reports do not take up a seat.",
    ),
    ("quantifier", PLANS, "Only some reports must have an owner.", "Each report must have an owner."),
    ("modality", PLANS, "Every report can have an owner.", "Every report needs to have an owner."),
    ("comparative", ROLES, "Members see more reports than admins.", "Members see fewer reports than admins."),
    (
        "swapped roles",
        ROLES,
        "Admins invite owners from Settings > Members.",
        "Admins are invited by owners from Settings > Members.",
    ),
    (
        "entity",
        SSO,
        "Tidemark supports SSO through SAML 2.0 with tested setups for OneLogin.",
        "SSO through SAML 2.0 is supported, with tested setups for Okta.",
    ),
    (
        "binding",
        PLANS,
        "Team costs $20 per seat per month.",
        "Business is priced at $20 per seat each month.",
    ),
    (
        "added clause",
        TRIAL,
        "Every new workspace starts with a 14-day free trial of the Business plan, "
        "which includes unlimited storage.",
        "Every new workspace starts with a 14-day free trial of the Business plan, "
        "and no credit card is needed.",
    ),
    (
        "prefixed antonym",
        ARCHIVE,
        "Archived projects still appear in the timer and timesheet pickers.",
        "Archived projects no longer appear in the timer and timesheet pickers.",
    ),
    (
        "a term with its opposite",
        ARCHIVE,
        "Approved weeks are unlocked, so their entries can be edited.",
        "Entries in an approved week stay locked until an admin unlocks them.",
    ),
    (
        "comparison the numbers settle",
        RATES,
        "Team API keys allow more requests per minute than Enterprise keys.",
        "Enterprise API keys allow more requests per minute than Team keys.",
    ),
    (
        "superlative the numbers settle",
        RATES,
        "Of all the plans, Solo has the highest per-minute limit.",
        "Of all the plans, Solo has the lowest per-minute limit.",
    ),
    (
        "cause and effect",
        TIMERS,
        "Stopping the current timer starts a new one.",
        "Starting a new timer stops the current one.",
    ),
    (
        "cause and effect with when",
        TIMERS,
        "When you archive a project, its client is archived too.",
        "When you archive a client, its projects are archived too.",
    ),
    (
        "irregular verb form",
        ROUNDING,
        "Rounding discards the original entry.",
        "Rounding keeps the original entry.",
    ),
    (
        "unless is if not",
        VAT,
        "If you provide a valid VAT number, Tidemark charges VAT at your local rate.",
        "As long as you do not provide a valid VAT number, Tidemark charges VAT at your local rate.",
    ),
    (
        "word order",
        REFUNDS,
        "Annual plans are refunded for partial months, "
        "and monthly subscriptions can be refunded in full within 30 days.",
        "Monthly subscriptions are not refunded for partial months, "
        "and annual plans can be refunded in full within 30 days.",
    ),
    (
        "another value of the same slot",
        ALLOWLIST,
        "Requests from any other IP address are accepted in the mobile apps.",
        "In the mobile apps, requests from any other IP address are not accepted.",
    ),
    (
        "a negation that opens a noun phrase",
        SUGGESTIONS,
        "Suggestions are tracked until you accept them.",
        "Nothing from a suggestion is tracked until you accept it.",
    ),
    (
        "a bound read as one phrase",
        IDLE_LIMIT,
        "The idle limit can be set to no less than 24 hours.",
        "The idle limit can be set no longer than 24 hours.",
    ),
    (
        "an exception the context does not make",
        SESSIONS,
        "Unless they are on the Business or Enterprise plan, owners can set the idle limit under "
        "Settings > Security.",
        "As long as they are on the Business or Enterprise plan, owners can set the idle limit under "
        "Settings > Security.",
    ),
    (
        "only when, against the context's condition",
        BUDGET,
        "Project managers get an email alert only when tracked time reaches 100% of the budget.",
        "Only when tracked time reaches 80% or 100% of the budget do project managers get an email alert.",
    ),
    (
        "a range given by between",
        IDLE_RANGE,
        "The idle limit can be set shorter than 15 minutes.",
        "The idle limit can be set no shorter than 15 minutes and no longer than 24 hours.",
    ),
    (
        "a denial in other words",
        TRIAL,
        "A credit card is needed to sign up.",
        "Signing up does not require a credit card.",
    ),
    (
        "provided is if",
        PAST_ENTRIES,
        "Provided those weeks have been approved, you can add entries up to 60 days in the past.",
        "Provided those weeks have not been approved, you can add entries up to 60 days in the past.",
    ),
    (
        "a strict bound against the number itself",
        PREVIEW,
        "Tidemark previews more than 20 rows of each import before it starts.",
        "Before an import starts, Tidemark previews 20 of its rows.",
    ),
    (
        "sent is received, in the passive",
        REMINDER,
        "A Slack reminder at 17:00 is sent to members who have tracked more than their daily hours.",
        "A Slack reminder at 17:00 is sent to members who have tracked less than their daily hours.",
    ),
    (
        "a modal denied",
        OWNERS,
        "A workspace does not need an Owner.",
        "Every workspace is required to have at least one Owner.",
    ),
    (
        "an exception against the context's sentence",
        RETENTION,
        "Unless a workspace is cancelled, all of its data is deleted.",
        "All of a workspace's data is deleted once it has stayed read-only for 30 days "
        "after it was cancelled.",
    ),
    (
        "a quantifier in other words, against the equally good window",
        ONE_TIMER,
        "Several timers can run at the same time.",
        "No more than one timer can run at a time.",
    ),
    (
        "before for once",
        ENFORCE,
        "You can switch on Enforce SSO before SSO is verified.",
        "Members can no longer sign in with a password once Enforce SSO is switched on.",
    ),
    (
        "keep doing is continue",
        OFFLINE,
        "The app stops tracking when you lose signal.",
        "Losing signal does not stop the app from tracking.",
    ),
    (
        "a number in hyphenated words",
        "Enterprise is priced on request with a minimum of 25 seats.",
        "Enterprise needs at least twenty-four seats.",
        "Enterprise needs at least twenty-five seats.",
    ),
    (
        "a time of day in the 12-hour clock",
        REMINDER,
        "Members can get a Slack reminder at 5 a.m. if they have tracked less than their daily hours.",
        "Members who have tracked less than their daily hours can get a Slack reminder at 5 p.m.",
    ),
    (
        "prevented from",
        "Invoiced entries are marked as billed so they are never charged twice.",
        "Marking invoiced entries as billed means they are charged twice.",
        "Marking invoiced entries as billed stops them from being charged twice.",
    ),
    (
        "an address",
        "To request a refund, email billing@tidemark.app from an owner account.",
        "To request a refund, email support@tidemark.app from an owner account.",
        "Refund requests go to billing@tidemark.app, sent from an owner account.",
    ),
    (
        "a party added to a list",
        "Idle detection works in the web app and the browser extension.",
        "Idle detection works in the web app, the browser extension and the mobile apps.",
        "Idle detection works in the browser extension and in the web app.",
    ),
    (
        "words traded between phrases",
        "A new limit applies to new sessions immediately and to existing sessions at their next page load.",
        "A new limit applies to existing sessions immediately and to new sessions at their next page load.",
        "Existing sessions get a new limit at their next page load, and new sessions get it immediately.",
    ),
    (
        "a party moved across its relation",
        "Rates are set per project, and a member's rate on a project overrides the project rate.",
        "The project rate overrides a member's rate on that project.",
        "On a project, a member's rate overrides the project's own rate.",
    ),
    (
        "a modal on the same verb, in another sentence",
        "When you come back, Tidemark asks what to do with the idle time. You can discard it, keep it, "
        "or move it to a new entry.",
        "When you come back, the idle time has to be discarded.",
        "When you come back, you may discard the idle time.",
    ),
    (
        "at any time, against a limit",
        REFUNDS,
        "Annual plans can be refunded in full at any time.",
        "Within 30 days of purchase, an annual plan can be refunded in full.",
    ),
    (
        "a concession the context does not make",
        "Each company gets one trial, but support can extend an active trial by 7 days on request.",
        "Support can extend a trial by 7 days on request, even after it has ended.",
        "On request, support can extend an active trial by a week.",
    ),
    (
        "a fraction of a unit",
        "The session times out after 105 minutes without activity.",
        "The session times out after an hour and a quarter without activity.",
        "The session times out after an hour and three quarters without activity.",
    ),
    (
        "a number bound to its name",
        MOBILE,
        "The app runs on Android 16 or later and iOS 10 or later.",
        "The app runs on iOS 16 or newer and on Android 10 or newer.",
    ),
    (
        "the direction of a move",
        "Downgrades take effect at the next period: moving from Business to Team turns off the audit log.",
        "Moving from Team to Business turns off the audit log.",
        "Going from Business down to Team switches off the audit log.",
    ),
    (
        "another party doing it",
        "Members submit their weekly timesheet, and it goes to their manager for approval.",
        "Managers submit their weekly timesheet to members for approval.",
        "Members submit a weekly timesheet that their manager approves.",
    ),
    (
        "an idiom turned around",
        "Tidemark signs you out after 14 days, or after 12 hours of inactivity, whichever comes first.",
        "Tidemark signs you out after 14 days or after 12 hours of inactivity, whichever comes later.",
        "Tidemark signs you out after 14 days or 12 idle hours, whichever is sooner.",
    ),
    (
        "the last weeks for the next",
        "The dashboard shows a forecast based on the last 4 weeks of tracking.",
        "The dashboard shows a forecast based on the next 4 weeks.",
        "The dashboard's forecast rests on the past 4 weeks of tracking.",
    ),
    (
        "only when, against a condition the window does not make",
        BUDGET,
        "Project managers get an email alert only when tracked time reaches 100% of the budget.",
        "Project managers get an email alert when tracked time reaches 100% of the budget.",
    ),
    (
        "a command is a name",
        "Connect Slack to start and stop timers with the /tidemark command.",
        "In Slack, you start and stop timers with the /timer command.",
        "Once Slack is connected, the /tidemark command starts and stops timers.",
    ),
    (
        "a number the window gives another party",
        "Business is $20 per seat per month, and Enterprise is priced on request.",
        "Enterprise is $20 per seat per month.",
        "Business costs $20 per seat each month.",
    ),
    (
        "any, where the window names which",
        SESSIONS,
        "Owners on any plan can set the idle limit under Settings > Security.",
        "On the Business and Enterprise plans, owners can set the idle limit under Settings > Security.",
    ),
    (
        "an action undone",
        "Deletion takes effect immediately and cannot be undone by support.",
        "If you delete it by mistake, support can reverse the deletion.",
        "Support cannot reverse a deletion, which takes effect immediately.",
    ),
    (
        "a count of times",
        "If your endpoint does not answer, we retry up to 5 times over 24 hours.",
        "If your endpoint does not answer, we retry up to 3 times over 24 hours.",
        "Up to 5 retries over 24 hours are made when your endpoint does not answer.",
    ),
    (
        "a bracket given to another word",
        "Durations can be shown as decimal hours (1.75) or hh:mm (1:45) in the export options.",
        "In the export options, durations can be shown as decimal hours (1:45) or as hh:mm (1.75).",
        "In the export options, durations can be shown as hh:mm (1:45) or as decimal hours (1.75).",
    ),
    (
        "business days are not calendar days",
        "Approved refunds reach your original payment method within 5 to 10 business days.",
        "Approved refunds reach your original payment method within 5 to 10 calendar days.",
        "Approved refunds reach your original payment method within 5 to 10 working days.",
    ),
    (
        "an item added to what the window says only of",
        "Tidemark reads events from your calendar and only asks for read access.",
        "Tidemark asks for both read and write access to your calendar.",
        "Tidemark asks for read access to your calendar, and nothing more.",
    ),
    (
        "a person the window does not name",
        "Managers approve the timesheets that members submit, and admins see every report.",
        "Owners approve the timesheets that members submit.",
        "Timesheets that members submit are approved by their managers.",
    ),
    (
        "terms traded between two clauses",
        "A rate change applies to new entries only, unless you tick Apply to past entries.",
        "A rate change applies to past entries only, unless you tick Apply to new entries.",
        "Unless you tick Apply to past entries, a rate change applies to new entries only.",
    ),
    (
        "steps in the other order",
        "Scan the QR code with an authenticator app, then enter the 6-digit code to confirm.",
        "You enter the 6-digit code before scanning the QR code with an authenticator app.",
        "You scan the QR code with an authenticator app before entering the 6-digit code.",
    ),
    (
        "instead of, the other way round",
        "Paying annually instead of monthly saves 20% on Solo, Team and Business.",
        "Paying monthly instead of annually saves 20% on Solo, Team and Business.",
        "On Solo, Team and Business, paying annually rather than monthly saves 20%.",
    ),
    (
        "a named kind for any",
        "Enterprise customers can set a custom retention period for time entries.",
        "Any customer can set a custom retention period for time entries.",
        "Customers on Enterprise can set a custom retention period for time entries.",
    ),
    (
        "the case an unless leaves out",
        VAT,
        "If you provide a valid VAT number, Tidemark charges VAT at your local rate.",
        "A business that has not provided a valid VAT number is charged VAT at its local rate.",
    ),
    (
        "a unit shared by a list of numbers",
        "Set the threshold between 5 and 60 minutes, 10 by default.",
        "The threshold is 15 minutes by default and ranges from 5 to 60 minutes.",
        "The threshold is 10 minutes by default and ranges from 5 to 60 minutes.",
    ),
    (
        "an item of the other list",
        "Required columns are date, email, project and duration; client, task and billable are optional.",
        "The client column is required.",
        "The client column is optional, while the date column is required.",
    ),
    (
        "the direction of a paste, past a comma",
        "Generate a SCIM token in Tidemark and paste it, along with the base URL, into Okta.",
        "You generate a SCIM token in Okta and paste it into Tidemark.",
        "You paste the SCIM token generated in Tidemark into Okta, together with the base URL.",
    ),
    (
        "which rate takes precedence",
        RATES_LEVELS,
        "On a project, the project rate takes precedence over a member's rate.",
        "On a project, a member's rate takes precedence over the project rate.",
    ),
    (
        "one step, and then another",
        RETENTION,
        "After a workspace is cancelled, its data is deleted, and it then stays read-only for 30 days.",
        "After a workspace is cancelled it is read-only for 30 days, and after that its data is deleted.",
    ),
    (
        "every plan, where the window names one and above",
        "Workspace owners on the Business plan and above can require 2FA for every member.",
        "Workspace owners on every paid plan can require 2FA for every member.",
        "On Business and higher plans, workspace owners can require 2FA for all members.",
    ),
    (
        "a rate per minute on a plan",
        RATES,
        "Each API key can make 30 requests per minute on Enterprise and 300 per minute on Solo.",
        "Each API key can make 300 requests per minute on Enterprise.",
    ),
    (
        "everyone, where the window names who",
        ENFORCE,
        "Once Enforce SSO is switched on, nobody can sign in with a password.",
        "Once Enforce SSO is switched on, members can no longer use a password to sign in.",
    ),
    (
        "a clause in -ing appended",
        OFFLINE,
        "The app syncs your entries when you reconnect, sending a push notification once it is done.",
        "Just so you know, losing signal does not stop the app from tracking.",
    ),
    (
        "an acronym spelled out in the context",
        "If your workspace enforces single sign-on, change your password with your identity provider.",
        "If your workspace enforces SAML, you change your password with your identity provider.",
        "If your workspace enforces SSO, you change your password with your identity provider.",
    ),
    (
        "a default in other words",
        "Set the threshold between 5 and 60 minutes, 10 by default.",
        "The threshold can be set from 5 to 60 minutes, and it is 15 minutes unless you change it.",
        "The threshold can be set from 5 to 60 minutes, and it is 10 minutes unless you change it.",
    ),
    (
        "kept is not changed",
        ROUNDING,
        "Rounding removes the original entry.",
        "Rounding never alters the original entry, which is always kept.",
    ),
    (
        "who does it, past a modal or 'to'",
        "Without backup codes, ask a workspace owner to reset 2FA for you.",
        "Without backup codes, a member can reset 2FA for the workspace owner.",
        "Without backup codes, a workspace owner can reset 2FA for you.",
    ),
    (
        "a version bound",
        MOBILE,
        "On Android, the app runs on Android 10 or earlier.",
        "On Android, the app runs on Android 10 or newer.",
    ),
    (
        "the gap between two prices, the right way round",
        PRICES,
        "A Team seat costs $8 more per month than a Business seat.",
        "A Business seat costs $8 more per month than a Team seat.",
    ),
    (
        "the gap between two prices, the right size",
        PRICES,
        "A Business seat costs $10 more per month than a Team seat.",
        "Per seat, the Business plan costs $8 a month more than the Team plan.",
    ),
    (
        "no limit, where the context sets one",
        SEATS,
        "Guests who can only view reports never use a seat, however many a workspace has.",
        "Guests who only view reports don't use a seat, for up to 10 guests per workspace.",
    ),
    (
        "an unlimited number, where the context gives one",
        "Any saved report can be emailed on a schedule to up to 20 recipients.",
        "A saved report can be emailed on a schedule to an unlimited number of recipients.",
        "A saved report can be emailed on a schedule to as many as 20 recipients.",
    ),
    (
        "a requirement said as 'can never ... without'",
        OWNERS,
        "A workspace can be left without an Owner.",
        "A workspace can never be left without an Owner.",
    ),
    (
        "a requirement said as 'can only ... once'",
        "SCIM requires SAML single sign-on to be configured first.",
        "SCIM can be used before SAML single sign-on is configured.",
        "SCIM can only be used once SAML single sign-on has been configured.",
    ),
    (
        "a passive whose participle is its verb ('reset by')",
        "Without backup codes, ask a workspace owner to reset 2FA for you from Settings > Members "
        "> (member) > Reset 2FA.",
        "Without backup codes, you can have a member reset 2FA for a workspace owner.",
        "A member without backup codes can have their 2FA reset by a workspace owner.",
    ),
    (
        "'stops ... from' a verb read as one word",
        ENFORCE,
        "Once SSO is verified, turning on Enforce SSO lets members sign in with a password.",
        "Once SSO is verified, turning on Enforce SSO stops members from signing in with a password.",
    ),
    (
        "a word the context uses only about something else",
        ALLOWLIST + " Owners can be exempted from the allowlist for emergency access.",
        "Requests from any other IP address are allowed in the web app and the mobile apps.",
        "Requests from IP addresses not on the allowlist are blocked in the web app and the mobile apps.",
    ),
    (
        "a denied comparison is a bound",
        PLANS,
        "You can export more than 100,000 rows.",
        "You cannot export more than 100,000 rows.",
    ),
    (
        "a denied comparison denies no word",
        TIMERS,
        "You can't run more than two timers at a time.",
        "You can't run more than one timer at a time.",
    ),
    (
        "the case an elided 'if you don't' states",
        TRIAL_END,
        "If you don't choose a plan when the trial ends, the workspace becomes read-only for 60 days.",
        "If you don't choose a plan when the trial ends, the workspace becomes read-only for 30 days.",
    ),
    (
        "steps in order, whichever step the days are said with",
        "When the trial ends without a plan, the workspace becomes read-only for 30 days and is then "
        "scheduled for deletion.",
        "When the trial ends without a plan, the workspace is scheduled for deletion for 30 days and then "
        "becomes read-only.",
        "When the trial ends without a plan, the workspace is read-only for 30 days, and after that it is "
        "scheduled for deletion.",
    ),
    (
        "another time condition",
        JIRA,
        "Tidemark writes tracked time back to Jira as worklogs as soon as the timer stops.",
        "Once a timesheet has been approved, Tidemark writes its tracked time back to Jira as worklogs.",
    ),
    (
        "every plan, where the context puts names in its place",
        "The Overtime report is available on Business and Enterprise, and overtime can be exported "
        "alongside regular hours.",
        "The Overtime report is available on every plan.",
        "The Overtime report is available on the Business and Enterprise plans.",
    ),
    (
        "every plan, where the context lists the plans",
        "Paying annually instead of monthly saves 20% on Solo, Team and Business.",
        "Paying annually saves 20% on every plan.",
        "Paying annually saves 20% on the Solo, Team and Business plans.",
    ),
    (
        "several times, where the context says only once",
        CODES,
        "Each backup code can be used several times.",
        "No backup code can be used more than once.",
    ),
    (
        "'a single time' is 'once'",
        CODES,
        "Any backup code can be used again and again, any number of times.",
        "Each of the backup codes you saved during setup works only a single time.",
    ),
    (
        "'in one go' is 'at once'",
        "Archiving a client archives all of its projects at once.",
        "Archiving a client archives only some of its projects.",
        "When a client is archived, every one of its projects is archived along with it in one go.",
    ),
    (
        "'a second time' is 'twice'",
        "Invoiced entries are marked as billed so they are never charged twice.",
        "Invoiced entries are marked as billed, so they can be charged a second time.",
        "Once entries are invoiced they are marked as billed, so they can't be charged a second time.",
    ),
    (
        "another thing doing what the context's clause ends with",
        "If the same entry was edited on the web while you were offline, the most recent change wins.",
        "If the same entry was edited on the web while you were offline, the web version always wins.",
        "If the same entry was edited on the web while you were offline, the latest change wins.",
    ),
    (
        "immediately, where the context gives a later time",
        "After a workspace is cancelled it stays read-only for 30 days, and then its data is deleted "
        "within a further 30 days.",
        "After a workspace is cancelled, its data is deleted immediately.",
        "Once a workspace is cancelled, its data is deleted within a further 30 days after its 30 "
        "read-only days.",
    ),
    (
        "'only once' where the context says single-use",
        "Tidemark then shows 10 single-use backup codes, so download or print them.",
        "Tidemark shows 10 backup codes, and each can be used only twice.",
        "Tidemark shows 10 backup codes, and each of them can be used only once.",
    ),
    (
        "'only after' a step the context orders",
        "Scan the QR code with an authenticator app, then enter the 6-digit code to confirm.",
        "You enter the 6-digit code to confirm, and only after that do you scan the QR code.",
        "You enter the 6-digit code to confirm only after scanning the QR code with an authenticator app.",
    ),
    (
        "a denied count, one more than the context's only",
        TIMERS,
        "You can have two timers running at a time.",
        "You can't have two timers running at a time.",
    ),
    (
        "'none of them needs' denies the need",
        "Reports can be emailed to up to 20 recipients, who don't need a Tidemark account.",
        "Each of the up to 20 recipients needs a Tidemark account.",
        "None of the up to 20 recipients needs a Tidemark account.",
    ),
    (
        "whichever happens sooner",
        "Tidemark signs you out after 14 days, or after 12 hours of inactivity, whichever comes first.",
        "Tidemark signs you out after 14 days, or after 12 hours of inactivity, whichever comes last.",
        "Tidemark signs you out after 14 days or after 12 hours of inactivity, depending on which "
        "happens sooner.",
    ),
    (
        "'only X' denies the other cases",
        CALENDAR_ACCESS,
        "Tidemark doesn't ask for read access to your calendar.",
        "Tidemark doesn't ask for write access to your calendar; it only asks for read access.",
    ),
    (
        "'only if' where the context says 'only, unless'",
        RATE_CHANGE,
        "A rate change affects past entries even if you do not tick Apply to past entries.",
        "A rate change only affects past entries if you tick Apply to past entries and choose a start date.",
    ),
    (
        "'only if' where the context says 'unless' alone",
        VAT,
        "Tidemark charges VAT at your local rate only when you provide a valid VAT number.",
        "Tidemark charges VAT at your local rate if you don't provide a valid VAT number.",
    ),
    (
        "'not just' adds, and denies nothing",
        "Owners and admins on the Business plan can view the audit log.",
        "Members on the Business plan, not just owners, can view the audit log.",
        "Admins on the Business plan, not just owners, can view the audit log.",
    ),
    (
        "any plan, where the context names the plan before the party",
        "Enterprise owners can limit access to specific IP addresses.",
        "Owners on any plan can limit access to specific IP addresses.",
        "Owners on Enterprise can limit access to specific IP addresses.",
    ),
    (
        "a bound of a range, said as a denied comparison",
        "Set the threshold between 5 and 60 minutes, 10 by default.",
        "The threshold can't be set lower than 10 minutes.",
        "The threshold can't be set lower than 5 minutes or higher than 60 minutes.",
    ),
    (
        "'has to' opens the verb a 'none of' waits for",
        "Reports can be emailed to up to 20 recipients, who don't need a Tidemark account.",
        "Every one of the recipients has to have a Tidemark account.",
        "None of the recipients has to have a Tidemark account.",
    ),
    (
        "'unable to' denies",
        "Deletion takes effect immediately and cannot be undone by support.",
        "Support can reverse a deletion.",
        "Deletion is immediate, and support is unable to reverse it.",
    ),
    (
        "'fails to' denies",
        "If your endpoint doesn't answer with a 2xx status, we retry up to 5 times over 24 hours.",
        "When your endpoint answers with a 2xx status, we retry up to 5 times over 24 hours.",
        "When your endpoint fails to answer with a 2xx status, we retry up to 5 times over 24 hours.",
    ),
    (
        "'back online' is 'reconnect'",
        "If you lose signal, the app stores up to 500 entries offline, then syncs them automatically when "
        "you reconnect.",
        "If you lose signal, the app stores up to 50 entries and syncs them once you're back online.",
        "If you lose signal, the app stores your entries and syncs them automatically once you're "
        "back online.",
    ),
    (
        "'not only' adds, and restricts nothing",
        "Anyone whose personal data is stored in Tidemark can ask for a copy of it.",
        "Only workspace owners can ask for a copy of the personal data Tidemark stores.",
        "Anyone whose personal data is stored in Tidemark, not only workspace owners, can ask for a "
        "copy of it.",
    ),
    (
        "'are all required' and 'at all times' are no scope",
        "A workspace must always have at least one Owner. Required columns are date, email, project and "
        "duration; client and task are optional.",
        "Every column of the import file is required.",
        "Date, email, project and duration are all required columns, and there must be at least one Owner "
        "at all times.",
    ),
    (
        "a word only a sibling clause says, with nothing else shared",
        "Archived projects disappear from the timer and timesheet pickers, so nobody can track new time to "
        "them, but all their entries stay in reports.",
        "Archived projects are removed from reports, along with all their entries.",
        "Since archived projects are removed from the timer and timesheet pickers, no one is able to track "
        "new time to them.",
    ),
    (
        "'each seat', where names follow the word before it only past a full stop",
        "Tidemark has four plans. Solo is $9 per month for one person, Team is $12 per seat per month, "
        "and Business is $20 per seat per month.",
        "On the Business plan, each seat is billed at $25 a month.",
        "On the Business plan, each seat is billed at $20 a month.",
    ),
    (
        "'can only ... once' where the context says 'once ..., you can'",
        "Once SSO is verified you can switch on Enforce SSO so members can no longer sign in with a "
        "password.",
        "Enforce SSO can be switched on before SSO is verified.",
        "Enforce SSO can only be switched on once SSO is verified.",
    ),
    (
        "another person opening a clause the context gives to one",
        "Members who lose their phone ask an owner to reset 2FA from Settings > Members. Owners who lose "
        "their phone must contact support.",
        "Members who lose their phone must contact support.",
        "An owner who loses their phone has to contact support.",
    ),
    (
        "another person opening a clause, past a list of plans",
        "On the Business plan, admins can post approval requests into a Slack channel. Each member links "
        "their own Slack account.",
        "On the Business plan, members can post approval requests into a Slack channel.",
        "Admins on the Business plan are able to post approval requests into a Slack channel.",
    ),
    (
        "every condition is a cause",
        "Optionally, Tidemark copies tracked time to Jira as worklogs once the timesheet is approved.",
        "If you turn on the option, Tidemark copies tracked time to Jira as worklogs before the timesheet is "
        "approved.",
        "If you turn on the option, tracked time is copied from Tidemark to Jira as worklogs after the "
        "timesheet has been approved.",
    ),
    (
        "an adverb relates no parties",
        "Enterprise workspaces can create and deactivate guests automatically through SCIM.",
        "Enterprise workspaces can create and delete guests automatically through SCIM.",
        "Through SCIM, Enterprise workspaces can automatically create and deactivate guests.",
    ),
    (
        "a noun in -ss is no verb",
        "Enterprise owners can limit access to Tidemark to specific IP addresses.",
        "Enterprise members can restrict Tidemark access to particular IP addresses.",
        "Owners on Enterprise can restrict Tidemark access to particular IP addresses.",
    ),
    (
        "a range's ends bound it",
        "Approved refunds reach your original payment method within 5 to 10 business days.",
        "Approved refunds take no less than 10 business days to reach your payment method.",
        "Approved refunds can take up to 10 business days to reach your payment method.",
    ),
    (
        "'a minimum of' is a bound",
        "Enterprise is priced on request with a minimum of 25 seats.",
        "Enterprise is priced on request and allows at most 25 seats.",
        "Enterprise needs at least 25 seats, and its price is given on request.",
    ),
    (
        "'no sooner than' is a bound",
        "Remaining copies are purged from our backups within 35 days.",
        "Remaining copies are purged from the backups no sooner than 35 days later.",
        "Remaining copies are removed from the backups in 35 days or less.",
    ),
    (
        "'at any moment' is 'at a time'",
        "Only one timer can run at a time.",
        "Several timers can run at any moment.",
        "Just one timer can be running at any moment.",
    ),
    (
        "'any number of' is 'as many as you like'",
        "You can invite as many teammates as you like during the trial.",
        "During the trial you can invite at most five teammates.",
        "During the trial you can invite any number of teammates.",
    ),
    (
        "a quantity another sentence gives the same thing",
        "After you cancel, the workspace stays usable until the paid period ends. It is then read-only for "
        "30 days so you can export your data. Cancelling does not delete your data or your login. You can "
        "reactivate at any time during the read-only period.",
        "Cancelling does not delete your data, and you can reactivate during the 60-day read-only period.",
        "Cancelling does not delete your data, and you can reactivate during the 30-day read-only period.",
    ),
    (
        "a comparison whose parties come after it, before 'than'",
        "On the Business plan the audit log keeps 90 days of history, and Enterprise keeps 1 year.",
        "The audit log keeps a longer history on the Business plan than on Enterprise.",
        "The audit log keeps a longer history on Enterprise than on the Business plan.",
    ),
    (
        "a comparison of the words beside two numbers",
        "The calendar sync reads events from the past 30 days and the next 7 days.",
        "The calendar sync reads more days of upcoming events than of past ones.",
        "The calendar sync reads fewer days of upcoming events than of past ones.",
    ),
    (
        "two numbers traded between the words beside them",
        "Set each member's expected hours in their schedule, for example 40 hours per week or 8 hours per "
        "day.",
        "Expected hours are set in each member's schedule, for example 8 hours per week or 40 hours per day.",
        "Expected hours are set in each member's schedule, for example 8 hours per day or 40 hours per week.",
    ),
    (
        "another person as the subject, where the context names it as an object",
        "Workspace owners on the Business plan can require 2FA for every member under Settings > Security.",
        "Any member of a Business workspace can require 2FA for everyone under Settings > Security.",
        "On the Business plan, owners can make 2FA mandatory for every member under Settings > Security.",
    ),
    (
        "'no matter' is a concession",
        "Members can get a Slack reminder at 17:00 if they have tracked less than their daily hours.",
        "Members get the 17:00 Slack reminder no matter how much time they have tracked.",
        "Members who have tracked less than their daily hours can get a Slack reminder at 17:00.",
    ),
    (
        "'speed up' is the opposite of 'slow down'",
        "Every response includes X-RateLimit-Remaining so your integration can slow down before it hits the "
        "cap.",
        "Every response includes X-RateLimit-Remaining so your integration can speed up before it hits the "
        "cap.",
        "Each response carries X-RateLimit-Remaining, so your integration can slow down before reaching the "
        "cap.",
    ),
    (
        "'can' with a denied bound is a requirement",
        "New passwords must be at least 12 characters long.",
        "A new password can be longer than 12 characters only if you ask support.",
        "A new password can be no shorter than 12 characters.",
    ),
    (
        "'only' those who, where the context says 'anyone who'",
        "Reminders go out every Monday at 9:00 to anyone who hasn't submitted the previous week.",
        "Reminders go out every Monday at 9:00 to anyone who has submitted the previous week.",
        "The Monday reminder only goes to people who haven't submitted the previous week.",
    ),
    (
        "a 'not' that narrows the noun before it",
        "Go to Settings > Security > IP allowlist and add up to 50 entries. Requests from any other IP "
        "address are blocked in the web app and the mobile apps. Owners can be exempted from the allowlist "
        "for emergency access.",
        "Requests from IP addresses not on the allowlist are allowed in the web app and the mobile apps.",
        "Requests from IP addresses that aren't on the allowlist are blocked in the web app and the mobile "
        "apps.",
    ),
    (
        "'no' opening a statement denies its verb",
        "Each calendar event appears as a suggestion that you can turn into a time entry, and nothing is "
        "tracked until you accept it.",
        "Time from a calendar event is tracked until you accept it.",
        "No time is tracked from a calendar event until you accept it.",
    ),
    (
        "'the same as' is 'match'",
        "New passwords must be at least 12 characters long and cannot match any of your last 5 passwords.",
        "A new password may be the same as one of your last 5 passwords.",
        "A new password cannot be identical to any of your last 5 passwords.",
    ),
    (
        "the 'only' of a number after its verb",
        "Each company gets one trial, but support can extend an active trial by 7 days on request.",
        "Each company only gets two trials, but support can extend an active trial by 7 days on request.",
        "Support can extend an active trial by 7 days on request, although each company only gets one trial.",
    ),
    (
        "a comparison of time against 'immediately' and 'next'",
        "Price increases apply immediately to every open order. Price decreases apply from the next "
        "invoice onwards.",
        "Price decreases apply sooner than price increases.",
        "Price increases apply sooner than price decreases.",
    ),
    (
        "'exactly one' where the context bounds the count",
        "Every project must have at least one manager, who approves its timesheets.",
        "Every project must have exactly one manager, who approves its timesheets.",
        "Every project must have one or more managers, who approve its timesheets.",
    ),
    (
        "'exactly' a number the context bounds",
        "A team can have at most 12 members on the Starter plan.",
        "A team has exactly 12 members on the Starter plan.",
        "A team can have no more than 12 members on the Starter plan.",
    ),
    (
        "a condition of the context is a requirement",
        "Screen capture works in the desktop app once you allow screen recording in your system settings.",
        "For screen capture to work in the desktop app, you need to block screen recording in your system "
        "settings.",
        "For screen capture to work in the desktop app, you need to allow screen recording in your system "
        "settings.",
    ),
    (
        "a denial with an exception says 'only'",
        "Guests can be invited to single projects. Guests see only the projects they are invited to and "
        "cannot edit time entries.",
        "Guests can see all projects except the ones they are invited to.",
        "Guests can't see any projects except the ones they are invited to.",
    ),
    (
        "the items of a list in another order",
        "Connect Dropbox or Box under Files > Storage to attach documents to tasks, and connect Zoom under "
        "Meetings > Video to start calls.",
        "Connect Dropbox or Box under Meetings > Video, and connect Zoom under Files > Storage.",
        "Connect Box or Dropbox under Files > Storage to attach documents to tasks.",
    ),
    (
        "'again' of what is shown only once",
        "Create a recovery code under Account > Recovery. The recovery code is shown only once, so store "
        "it in your password manager.",
        "You can view the recovery code again later under Account > Recovery.",
        "The recovery code is shown a single time, so keep it in your password manager.",
    ),
    (
        "a requirement of one of the context's examples",
        "Sign the request with a hashing algorithm such as SHA-256, SHA-384 or SHA-512, then send it to the "
        "signing endpoint.",
        "You must sign the request with SHA-256 before sending it to the signing endpoint.",
        "You can sign the request with SHA-512 and then send it to the signing endpoint.",
    ),
    (
        "a time condition that restates the claim's own words",
        "Optionally, the app posts logged hours to your payroll system once the timesheet is approved.",
        "The app posts logged hours to your payroll system as soon as the hours are logged.",
        "Once the timesheet is approved, the app can post logged hours to your payroll system.",
    ),
    (
        "'without' doing what the context makes a condition",
        "Automatic backups run every night once you connect a storage bucket under Settings > Backups.",
        "Automatic backups run every night without you having to connect a storage bucket.",
        "Automatic backups run every night after you connect a storage bucket under Settings > Backups.",
    ),
    (
        "'always' where the context states a condition",
        "The weekly digest includes a chart of tracked hours if you turn on Charts in your profile.",
        "The weekly digest always includes a chart of tracked hours.",
        "If you turn on Charts in your profile, the weekly digest includes a chart of tracked hours.",
    ),
    (
        "'and older' bounds a version",
        "The desktop agent runs on Windows 10 or later and on macOS 13 or later.",
        "The desktop agent runs on Windows 10 and older versions of Windows.",
        "The desktop agent runs on Windows 10 and newer versions of Windows.",
    ),
]
