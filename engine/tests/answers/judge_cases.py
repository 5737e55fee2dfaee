"""Known hallucinations and faithful rewordings, shared by the tests of every judge.

Each narrow check (judges/findings.py) has a case both ways, about texts of several kinds
(support articles, leaflets, timetables, history): a mechanism is tested on what it is for,
never on one product's wording. How well the checks do on labels written by people who never
saw them is measured by `calibrate`, not here (docs/judges.md).
"""

from __future__ import annotations

REFUNDS = (
    "Monthly subscriptions are not refunded for partial months; when you cancel, you keep "
    "access until the end of the current billing period. Annual plans can be refunded in full "
    "within 30 days of purchase or renewal. Approved refunds reach your original payment "
    "method within 5 to 10 business days."
)
LEAFLET = (
    "Adults may take one or two 500 mg tablets every 4 to 6 hours. Do not take more than 8 "
    "tablets in 24 hours. This medicine may cause drowsiness in some people."
)
TRAINS = (
    "On weekdays the first train from Aldby to Corran leaves at 05:40, and trains then run "
    "every 20 minutes. Passengers whose train arrives more than 30 minutes late can claim "
    "half of the single fare."
)
HISTORY = (
    "The bridge at Tarn was completed in 1824 after six years of work. It was designed by the "
    "engineer Maria Holt and replaced a ferry crossing. Historians think the bridge may have "
    "doubled trade in the town."
)
STUDY = (
    "In the survey, people who slept less than six hours were more likely to report headaches. "
    "The association remained after adjusting for age."
)
DEVICE = (
    "The speaker charges in about 2 hours and plays for up to 12 hours. The battery should be "
    "charged between 0 °C and 35 °C. Pairing mode starts when you hold the power button."
)

# The seed's example: the faithful sentence and the same sentence with 30 -> 60 days.
REFUND_FAITHFUL = ("Annual plans can be refunded in full within 30 days of purchase.", REFUNDS)
REFUND_60_DAYS = ("Annual plans can be refunded in full within 60 days of purchase.", REFUNDS)

# (finding, a claim it must catch, a rewording it must let pass, the context)
KINDS = [
    ("number", REFUND_60_DAYS[0], REFUND_FAITHFUL[0], REFUNDS),
    (
        "number",
        "Do not take more than 10 tablets in 24 hours.",
        "Never take over 8 tablets in a day.",
        LEAFLET,
    ),
    (
        "number",
        "The battery should be charged between 0 °F and 35 °F.",
        "Charge it between 32 °F and 95 °F.",
        DEVICE,
    ),
    ("number", "The bridge took eight years to build.", "Work on the bridge began in 1818.", HISTORY),
    (
        "name",
        "The bridge was designed by the engineer Thomas Holt.",
        "Maria Holt designed the bridge.",
        HISTORY,
    ),
    (
        "polarity",
        "Monthly subscriptions are refunded for partial months.",
        "Partial months are not refunded on monthly subscriptions.",
        REFUNDS,
    ),
    (
        "polarity",
        "The association disappeared after adjusting for age.",
        "After adjusting for age the association remained.",
        STUDY,
    ),
    (
        "hedge",
        "The bridge doubled trade in the town.",
        "Historians think the bridge may have doubled trade in the town.",
        HISTORY,
    ),
    (
        "quantifier",
        "This medicine causes drowsiness in all people.",
        "Some people may get drowsy on this medicine.",
        LEAFLET,
    ),
    (
        "modality",
        "Adults must take two 500 mg tablets every 4 hours.",
        "Adults may take two 500 mg tablets every 4 hours.",
        LEAFLET,
    ),
    (
        "causal",
        "Sleeping less than six hours causes headaches.",
        "Short sleep was associated with reporting headaches.",
        STUDY,
    ),
]

# (kind, claim, context): each must be judged unsupported.
HALLUCINATIONS = [(finding, claim, context) for finding, claim, _, context in KINDS] + [
    ("invented clause", "The speaker plays for up to 12 hours and is waterproof to 10 metres.", DEVICE),
    ("invented feature", "The speaker can also be charged wirelessly on any Qi pad.", DEVICE),
    (
        "unit change",
        "Passengers whose train arrives more than 30 hours late can claim half of the single fare.",
        TRAINS,
    ),
]

# (kind, claim, context): each must be judged supported.
FAITHFUL = [(finding, claim, context) for finding, _, claim, context in KINDS] + [
    (
        "verbatim",
        "Approved refunds reach your original payment method within 5 to 10 business days.",
        REFUNDS,
    ),
    ("unit conversion", "A full charge takes about 120 minutes.", DEVICE),
    ("time of day", "The first weekday train to Corran leaves at 5:40 a.m.", TRAINS),
    (
        "arithmetic",
        "A passenger can claim 50% of the single fare when the train is over 30 minutes late.",
        TRAINS,
    ),
    ("two sentences", "The bridge, designed by Maria Holt, was completed in 1824.", HISTORY),
]
