"""Fixed vocabularies of the item generator: products, people, places."""

# (sku, name, unit price in pence); names have distinct words so customers can describe them
PRODUCTS = [
    ("KET-100", "Steel kettle", 3499),
    ("TEA-210", "Ceramic teapot", 2450),
    ("BLE-300", "Glass blender", 7900),
    ("CHB-120", "Bamboo chopping board", 1899),
    ("SKL-410", "Cast iron skillet", 4200),
    ("TWL-050", "Linen tea towels", 1299),
    ("MUG-060", "Stoneware mug set", 2995),
    ("LMP-700", "Brass desk lamp", 6400),
    ("CLK-710", "Wall clock", 3850),
    ("RUG-800", "Wool rug", 14900),
    ("CUS-810", "Velvet cushion", 2200),
    ("VAS-820", "Crystal vase", 2775),
    ("TOA-330", "Four-slice toaster", 5499),
    ("PAN-420", "Non-stick frying pan", 3149),
    ("KNF-430", "Chef knife", 6800),
    ("DIN-440", "Porcelain dinner plates", 4500),
    ("BWL-450", "Olive wood salad bowl", 1950),
    ("MIR-830", "Round mirror", 8900),
    ("CAN-840", "Scented candle", 1625),
    ("THR-850", "Knitted throw", 5800),
    ("SCL-340", "Kitchen scales", 2399),
    ("COF-350", "Coffee grinder", 4650),
    ("ESP-360", "Espresso machine", 124900),
    ("TBL-900", "Oak dining table", 145000),
    ("ARM-910", "Leather armchair", 118000),
    ("BED-920", "Duvet cover", 3999),
    ("PIL-930", "Feather pillow", 2800),
    ("LAD-940", "Step ladder", 5200),
    ("IRN-950", "Steam iron", 4499),
    ("FAN-960", "Desk fan", 3500),
]

FIRST_NAMES = [
    "Dana", "Priya", "Tom", "Aisha", "Marek", "Sophie", "Callum", "Nadia", "Oliver", "Grace",
    "Ravi", "Hannah", "Lewis", "Maya", "Connor", "Zara", "Ethan", "Isla", "Samuel", "Chloe",
    "Jonah", "Leah", "Owen", "Freya", "Kwame", "Elena", "Rory", "Amara", "Finn", "Ruth",
]  # fmt: skip

LAST_NAMES = [
    "Whitfield", "Patel", "Okafor", "Nowak", "Harrison", "Campbell", "Ahmed", "Fletcher",
    "Lindqvist", "Brennan", "Moreno", "Sutherland", "Kowalski", "Osei", "Thornton", "Gallagher",
    "Reid", "Chaudhry", "Ellison", "Marsh", "Doyle", "Kaur", "Bishop", "Mensah", "Holloway",
]  # fmt: skip

# (city, postcode area)
CITIES = [
    ("Leeds", "LS"), ("Manchester", "M"), ("Bristol", "BS"), ("York", "YO"), ("Bath", "BA"),
    ("Leicester", "LE"), ("Nottingham", "NG"), ("Sheffield", "S"), ("Cardiff", "CF"),
    ("Glasgow", "G"), ("Edinburgh", "EH"), ("Norwich", "NR"), ("Oxford", "OX"),
    ("Cambridge", "CB"), ("Brighton", "BN"), ("Exeter", "EX"), ("Plymouth", "PL"),
    ("Derby", "DE"), ("Coventry", "CV"), ("Reading", "RG"), ("Durham", "DH"), ("Chester", "CH"),
    ("Lincoln", "LN"), ("Hull", "HU"), ("Liverpool", "L"),
]  # fmt: skip

STREETS = [
    "Mill Lane", "High Street", "Church Road", "Station Road", "Victoria Street", "Park Avenue",
    "Orchard Close", "Willow Way", "Kings Road", "Meadow View", "Castle Street", "Hawthorn Drive",
    "Chapel Lane", "Green Lane", "Market Place", "Elm Grove", "Riverside Walk", "Abbey Road",
]  # fmt: skip

DOMAINS = ["example.com", "mail.example.org", "post.example.net", "inbox.example.co.uk"]

INWARD_LETTERS = "ABDEFGHJLNPQRSTUWXYZ"

REFUND_REASONS = [
    "It is not as described on the website.",
    "The colour is quite different from the photos.",
    "I changed my mind, it does not suit the room.",
    "It arrived too late for the event I bought it for.",
    "It is much smaller than I expected.",
    "I ordered two by accident and only need one.",
]

DAMAGE = [
    "arrived damaged",
    "was broken when I opened the box",
    "came smashed",
    "arrived with a big crack",
    "was badly dented in the box",
    "arrived shattered",
]

CANCEL_REASONS = [
    "I ordered it by mistake.",
    "I found it cheaper locally, sorry.",
    "I no longer need it.",
    "I ordered the wrong one.",
]
