# ruff: noqa: E501  (the category table below is data: one category per line)
"""The synthetic benchmark's category taxonomy: 160 instance and 12 area/linear categories.

Each row of ``_TABLE`` reads ``name | group | style | size | multiplicity | synonyms | kind |
function``:

* ``style`` names a drawing archetype in :data:`STYLES` (shape, inner pattern, colour, height);
* ``size`` is a size class (:data:`SIZE_PX`, long side in pixels at GSD factor 1);
* ``multiplicity`` is ``one``, ``few`` or ``many`` (how many instances an annotation may hold);
* ``synonyms`` are the open-vocabulary paraphrases (1-3 words, unique across the taxonomy);
* ``kind`` and ``function`` feed the reasoning queries ("a {kind} that {function}").
"""

from __future__ import annotations

from dataclasses import dataclass

GROUPS = {
    "AGR": "Agriculture & Forestry",
    "BSR": "Business, Service & Residential",
    "IMS": "Industrial, Mining & Storage",
    "TRA": "Transportation",
    "PUB": "Public Administration & Services",
    "SPL": "Sports, Leisure & Tourism",
    "ENU": "Energy & Utilities",
    "WAT": "Water & Coastal",
    "NAT": "Natural Land Cover",
}


@dataclass(frozen=True)
class Style:
    """How an object category is drawn.

    Attributes:
        shape: polygon family (``circle``, ``rect``, ``lshape``, ``ship``, ``plane``,
            ``turbine``, ``fan``, ``track``, ``blob``, ``octagon``) or ``area_*`` for area classes.
        aspect: length / width of the footprint.
        pattern: inner detail drawn inside the polygon.
        colour: base RGB colour.
        height: shadow length as a multiple of the object's width (0 = flat).
        setting: ground under the object: ``land``, ``water`` or ``paved``.
    """

    shape: str
    aspect: float
    pattern: str
    colour: tuple[int, int, int]
    height: float
    setting: str = "land"


STYLES: dict[str, Style] = {
    "tank": Style("circle", 1.0, "rim", (214, 214, 206), 0.25),
    "silo": Style("circle", 1.0, "rim", (190, 192, 188), 1.2),
    "chimney": Style("circle", 1.0, "plain", (120, 116, 110), 5.0),
    "cooling": Style("circle", 1.0, "cooling", (170, 168, 160), 1.0),
    "dome": Style("circle", 1.0, "dome", (232, 232, 228), 0.4),
    "green_dome": Style("circle", 1.0, "dome", (70, 140, 110), 0.5),
    "round_water": Style("circle", 1.0, "pool", (78, 120, 110), 0.05),
    "pivot": Style("circle", 1.0, "rings", (96, 140, 62), 0.0),
    "roundabout": Style("circle", 1.0, "roundabout", (110, 110, 108), 0.0),
    "helipad": Style("circle", 1.0, "helipad", (96, 98, 100), 0.0, "paved"),
    "wheel": Style("circle", 1.0, "rim", (200, 60, 60), 0.3),
    "umbrella": Style("octagon", 1.0, "dome", (236, 90, 70), 0.2),
    "hay": Style("circle", 1.0, "dome", (196, 170, 100), 0.3),
    "tree": Style("circle", 1.0, "dome", (52, 92, 44), 0.6),
    "cage": Style("circle", 1.0, "rim", (60, 64, 66), 0.0, "water"),
    "satdish": Style("circle", 1.0, "dome", (226, 226, 224), 0.3),
    "pagoda": Style("octagon", 1.0, "dome", (150, 70, 50), 1.5),
    "house": Style("rect", 1.4, "ridge", (168, 82, 64), 0.5),
    "barn": Style("rect", 1.8, "ridge", (150, 54, 44), 0.5),
    "shed": Style("rect", 1.3, "plain", (140, 140, 136), 0.3),
    "building": Style("rect", 1.6, "roof", (180, 178, 172), 0.7),
    "tall": Style("rect", 1.2, "roof", (150, 160, 170), 2.5),
    "lbuilding": Style("lshape", 1.5, "roof", (196, 190, 180), 0.7),
    "redroof": Style("rect", 1.5, "ridge", (160, 56, 40), 0.6),
    "tower": Style("rect", 1.0, "roof", (176, 160, 140), 3.0),
    "round_tower": Style("circle", 1.0, "dome", (210, 206, 196), 3.0),
    "long_shed": Style("rect", 4.5, "stripes", (200, 200, 196), 0.3),
    "greenhouse": Style("rect", 3.0, "stripes", (226, 232, 234), 0.15),
    "solar": Style("rect", 1.8, "grid", (38, 52, 86), 0.0),
    "solar_small": Style("rect", 1.7, "grid", (36, 48, 80), 0.05),
    "canopy": Style("rect", 1.7, "plain", (236, 236, 232), 0.4, "paved"),
    "court": Style("rect", 2.1, "court", (64, 128, 96), 0.0),
    "court_sand": Style("rect", 2.0, "court", (214, 190, 140), 0.0),
    "court_ice": Style("rect", 2.2, "court", (228, 236, 240), 0.0),
    "pitch": Style("rect", 1.55, "pitch", (72, 142, 64), 0.0),
    "arena": Style("rect", 1.6, "plain", (200, 176, 130), 0.0),
    "fan": Style("fan", 1.0, "fan", (94, 150, 70), 0.0),
    "fan_grey": Style("fan", 1.0, "stripes", (170, 166, 156), 0.0),
    "track": Style("track", 1.8, "track", (180, 70, 56), 0.0),
    "track_grey": Style("track", 2.2, "track", (120, 120, 118), 0.0),
    "track_brown": Style("track", 2.6, "track", (160, 128, 90), 0.0),
    "pool": Style("rect", 2.0, "pool", (60, 170, 200), 0.0),
    "pond": Style("rect", 1.6, "water", (56, 88, 76), 0.0),
    "salt": Style("rect", 1.5, "water", (200, 210, 214), 0.0),
    "drydock": Style("rect", 4.0, "pool", (110, 118, 124), 0.0, "water"),
    "lock": Style("rect", 5.0, "water", (64, 96, 110), 0.0),
    "blob_water": Style("blob", 1.0, "water", (50, 84, 104), 0.0),
    "blob_bright": Style("blob", 1.0, "water", (70, 180, 210), 0.0),
    "blob_green": Style("blob", 1.0, "lawn", (88, 150, 70), 0.0),
    "blob_ground": Style("blob", 1.0, "speckle", (170, 150, 120), 0.0),
    "blob_dark": Style("blob", 1.0, "speckle", (70, 66, 60), 0.0),
    "cemetery": Style("rect", 1.3, "dots", (120, 140, 100), 0.0),
    "parking": Style("rect", 1.5, "parking", (88, 88, 90), 0.0),
    "feedlot": Style("rect", 1.4, "dots", (140, 116, 86), 0.0),
    "playground": Style("rect", 1.3, "dots", (196, 120, 80), 0.0),
    "container": Style("rect", 2.4, "plain", (180, 70, 50), 0.2, "paved"),
    "vehicle": Style("rect", 2.1, "car", (200, 200, 205), 0.15, "paved"),
    "bus": Style("rect", 3.8, "car", (226, 196, 60), 0.2, "paved"),
    "tractor": Style("rect", 1.6, "car", (60, 130, 60), 0.2),
    "excavator": Style("rect", 1.8, "car", (230, 190, 40), 0.3),
    "train": Style("rect", 14.0, "stripes", (150, 60, 50), 0.2),
    "ship": Style("ship", 5.0, "deck", (200, 200, 196), 0.2, "water"),
    "tanker": Style("ship", 6.0, "deck", (150, 60, 50), 0.2, "water"),
    "boxship": Style("ship", 6.0, "stripes", (60, 90, 150), 0.25, "water"),
    "boat": Style("ship", 3.0, "deck", (236, 236, 236), 0.1, "water"),
    "barge": Style("rect", 4.0, "plain", (90, 80, 70), 0.1, "water"),
    "platform": Style("rect", 1.2, "grid", (130, 130, 126), 1.0, "water"),
    "plane": Style("plane", 1.0, "plain", (230, 232, 234), 0.2, "paved"),
    "jet": Style("plane", 1.0, "plain", (120, 128, 132), 0.2, "paved"),
    "turbine": Style("turbine", 1.0, "plain", (240, 240, 240), 2.0),
    "palm": Style("turbine", 1.0, "plain", (60, 110, 50), 0.8),
    "pylon": Style("rect", 1.0, "grid", (110, 110, 108), 4.0),
    "bridge": Style("rect", 7.0, "plain", (160, 160, 156), 0.3, "water"),
    "pier": Style("rect", 6.0, "stripes", (150, 130, 100), 0.1, "water"),
    "footbridge": Style("rect", 9.0, "plain", (190, 190, 186), 0.4),
    "dam": Style("rect", 8.0, "plain", (176, 174, 166), 0.5, "water"),
    "runway": Style("rect", 16.0, "runway", (100, 100, 102), 0.0),
    "crane": Style("rect", 9.0, "stripes", (226, 190, 40), 1.5),
    "conveyor": Style("rect", 14.0, "stripes", (130, 130, 126), 0.5),
    "lumber": Style("rect", 1.6, "stripes", (168, 128, 86), 0.2),
    "tent": Style("rect", 1.3, "ridge", (60, 120, 170), 0.2),
    "mobile_home": Style("rect", 2.8, "plain", (220, 222, 218), 0.2),
    "kiln": Style("track", 2.5, "track", (140, 80, 60), 0.3),
    "substation": Style("rect", 1.4, "grid", (150, 150, 146), 0.3),
    "area_field": Style("area_field", 1.0, "field", (150, 160, 90), 0.0),
    "area_paddy": Style("area_paddy", 1.0, "paddy", (90, 140, 110), 0.0),
    "area_orchard": Style("area_orchard", 1.0, "orchard", (110, 130, 70), 0.0),
    "area_forest": Style("area_blob", 1.0, "forest", (40, 80, 40), 0.0),
    "area_grass": Style("area_blob", 1.0, "grass", (120, 160, 80), 0.0),
    "area_soil": Style("area_blob", 1.0, "soil", (176, 150, 116), 0.0),
    "area_wetland": Style("area_blob", 1.0, "wetland", (80, 110, 80), 0.0),
    "area_beach": Style("area_band", 1.0, "beach", (226, 210, 170), 0.0),
    "area_road": Style("area_road", 1.0, "road", (96, 96, 98), 0.0),
    "area_rail": Style("area_rail", 1.0, "rail", (120, 104, 90), 0.0),
    "area_river": Style("area_river", 1.0, "water", (52, 86, 106), 0.0),
    "area_canal": Style("area_canal", 1.0, "water", (60, 96, 100), 0.0),
}

# Long side in pixels (min, max) at GSD factor 1.
SIZE_PX: dict[str, tuple[float, float]] = {
    "xs": (12.0, 24.0),
    "s": (22.0, 48.0),
    "m": (40.0, 100.0),
    "l": (90.0, 220.0),
    "xl": (240.0, 900.0),
}

_TABLE = """
storage tank|IMS|tank|m|many|oil storage tank,fuel tank|structure|keeps large volumes of liquid fuel or chemicals sealed inside
gas holder|IMS|tank|l|few|gasometer,gas tank|structure|stores town gas at low pressure for the local network
grain silo|AGR|silo|s|many|silo,grain bin|structure|keeps harvested grain dry until it can be sold
chimney|IMS|chimney|xs|few|smokestack,factory chimney|structure|releases exhaust gases high above the surrounding buildings
cooling tower|ENU|cooling|l|few|hyperboloid tower,natural draft tower|structure|dissipates waste heat from a power station into the air
factory|IMS|building|l|few|factory building,industrial plant|building|houses machines that manufacture goods on a large scale
warehouse|IMS|building|l|few|storage building,depot|building|holds goods in bulk before they are shipped onward
shipping container|IMS|container|xs|many|container,cargo container|object|carries freight between ships, trains and trucks
open pit mine|IMS|blob_ground|xl|one|open-pit mine,surface mine|site|extracts ore or coal from a huge excavated hole
quarry|IMS|blob_ground|l|one|stone quarry,rock quarry|site|extracts stone for building material from exposed rock faces
landfill|IMS|blob_dark|l|one|dump site,waste dump|site|receives the household and industrial waste of the city
tailings pond|IMS|blob_bright|l|one|tailings dam,mine tailings|pond|holds the waste slurry left over from ore processing
brick kiln|IMS|kiln|m|few|brick factory,kiln|structure|fires clay bricks in a long oval burning chamber
cement plant|IMS|lbuilding|l|one|cement factory,cement works|facility|grinds and burns limestone to produce cement powder
steel mill|IMS|building|xl|one|steelworks,steel plant|facility|melts iron ore and scrap metal into steel products
sawmill|IMS|building|m|one|lumber mill,timber mill|facility|cuts logs from the forest into planks and beams
oil refinery|IMS|lbuilding|xl|one|refinery,petroleum refinery|facility|turns crude oil into petrol, diesel and other fuels
pumpjack|ENU|excavator|xs|many|oil pump,nodding donkey|machine|lifts crude oil out of a well in steady strokes
tower crane|IMS|crane|m|few|construction crane,building crane|machine|lifts heavy building materials on a construction site
gantry crane|TRA|crane|m|few|container crane,quay crane|machine|loads and unloads containers from ships at the quay
conveyor belt|IMS|conveyor|l|few|belt conveyor,conveyor|structure|moves bulk material such as coal between two facilities
stockpile|IMS|blob_dark|m|few|coal pile,material heap|heap|stores loose bulk material in the open air
settling tank|ENU|round_water|m|many|clarifier,sedimentation tank|basin|lets solids settle out of wastewater before it is released
biogas digester|ENU|dome|s|few|anaerobic digester,digester tank|tank|ferments manure and organic waste to produce methane gas
water tower|ENU|round_tower|s|one|elevated water tank,water reservoir tower|structure|keeps drinking water high up to maintain pipe pressure
construction site|IMS|blob_ground|l|one|building site,building plot|site|is being cleared and built on with new structures
scrapyard|IMS|blob_dark|m|one|junkyard,salvage yard|site|collects old vehicles and scrap metal for recycling
lumber yard|IMS|lumber|m|one|timber yard,wood yard|site|stacks sawn wood in the open before it is sold
salt pan|IMS|salt|l|few|salt evaporation pond,saltern|pond|evaporates seawater in the sun to harvest salt crystals
logistics center|IMS|building|xl|one|distribution center,fulfilment centre|building|sorts parcels and goods for delivery to shops and homes
chemical plant|IMS|lbuilding|l|one|chemical factory,chemical works|facility|produces industrial chemicals in reactors and pipework
shipyard|IMS|lbuilding|xl|one|shipbuilding yard,dockyard|facility|builds and repairs ships in docks and on slipways
gas storage sphere|IMS|dome|s|few|spherical tank,LPG sphere|structure|stores pressurised liquefied gas inside a ball shaped shell
excavator|IMS|excavator|xs|few|digger,backhoe|machine|digs and moves earth around on a construction site
wind turbine|ENU|turbine|s|many|wind generator,wind power unit|machine|turns the force of the wind into electricity
solar farm|ENU|solar|xl|one|solar power plant,photovoltaic farm|facility|converts sunlight into electricity across large fields of panels
solar panel|ENU|solar_small|xs|many|photovoltaic panel,PV panel|device|turns sunlight into electricity on a small scale
transmission tower|ENU|pylon|xs|many|electricity pylon,power pylon|structure|carries high-voltage power lines across the countryside
electrical substation|ENU|substation|m|one|substation,power substation|facility|transforms voltage between the transmission and local grids
power plant|ENU|lbuilding|xl|one|power station,thermal power plant|facility|burns fuel to generate electricity for the whole region
nuclear reactor|ENU|dome|m|few|reactor dome,containment building|structure|contains a controlled nuclear chain reaction that produces heat
hydroelectric dam|ENU|dam|l|one|dam,hydro dam|structure|holds back a river to generate power from falling water
offshore platform|ENU|platform|m|one|oil platform,production platform|structure|extracts oil and gas from beneath the seabed far offshore
sewage lagoon|ENU|pond|m|few|wastewater lagoon,oxidation pond|pond|treats sewage slowly in shallow open basins
radio mast|ENU|pylon|xs|one|radio tower,telecom mast|structure|transmits radio and phone signals over a wide area
satellite dish|ENU|satdish|xs|few|dish antenna,parabolic antenna|device|receives signals sent down from satellites in orbit
desalination plant|ENU|lbuilding|l|one|desalination facility,desalination works|facility|turns seawater into fresh drinking water for the coast
gas station|BSR|canopy|s|few|petrol station,filling station|facility|sells fuel to passing cars and trucks on the road
reservoir|WAT|blob_water|xl|one|water reservoir,storage reservoir|water body|stores drinking water for the surrounding towns and cities
weir|WAT|dam|m|one|low dam,overflow weir|structure|raises the river level and controls how fast it flows
airplane|TRA|plane|m|many|aircraft,airliner|vehicle|carries passengers or cargo through the air between airports
helicopter|TRA|jet|s|few|chopper,rotorcraft|vehicle|takes off vertically to fly people on short trips
helipad|TRA|helipad|s|few|helicopter pad,heliport|platform|lets helicopters land and take off safely
runway|TRA|runway|xl|one|airstrip,landing strip|strip|lets aircraft accelerate for takeoff and slow down after landing
airport terminal|TRA|lbuilding|xl|one|terminal building,passenger terminal|building|processes passengers boarding and leaving the aircraft
hangar|TRA|building|l|few|aircraft hangar,hangar building|building|shelters aircraft during maintenance and long storage
ship|TRA|ship|m|many|vessel,cargo ship|vessel|carries heavy cargo across the sea between ports
boat|TRA|boat|xs|many|small boat,motorboat|vessel|carries a few people across lakes, rivers or harbours
sailboat|TRA|boat|xs|many|sailing boat,yacht|vessel|moves across the water using only the wind
oil tanker|TRA|tanker|l|few|tanker ship,crude carrier|vessel|transports crude oil in bulk across the ocean
ferry|TRA|ship|m|few|passenger ferry,car ferry|vessel|shuttles passengers and cars across a strait on a schedule
barge|TRA|barge|m|few|river barge,cargo barge|vessel|floats heavy bulk cargo slowly along rivers and canals
fishing boat|TRA|boat|s|many|trawler,fishing vessel|vessel|goes out to sea to catch fish for the market
container ship|TRA|boxship|l|few|box ship,feeder ship|vessel|carries stacked shipping containers between large ports
warship|TRA|tanker|l|one|naval vessel,frigate|vessel|is armed to defend the coast during naval operations
cruise ship|TRA|ship|l|one|cruise liner,ocean liner|vessel|carries holidaymakers on long voyages with many passenger decks
pier|TRA|pier|m|few|jetty,wharf|structure|extends into the water so that boats can moor alongside
dry dock|TRA|drydock|l|one|drydock,graving dock|basin|can be drained so that ship hulls are repaired out of water
lighthouse|TRA|round_tower|xs|one|light tower,beacon tower|structure|guides ships at night with a bright rotating light
car|TRA|vehicle|xs|many|small vehicle,passenger car|vehicle|drives people along roads for their daily trips
bus|TRA|bus|xs|many|coach,city bus|vehicle|transports many passengers along fixed city routes
truck|TRA|bus|xs|many|lorry,large vehicle|vehicle|hauls goods by road over long distances
tractor|AGR|tractor|xs|few|farm tractor,agricultural tractor|vehicle|pulls ploughs and trailers across agricultural fields
train|TRA|train|l|few|railway train,freight train|vehicle|moves passengers or freight along a railway line
bridge|TRA|bridge|l|one|road bridge,river bridge|structure|carries traffic over a river, road or deep valley
highway overpass|TRA|footbridge|l|one|overpass,flyover|structure|carries one road over another without a junction
footbridge|TRA|footbridge|m|one|pedestrian bridge,walkway bridge|structure|lets pedestrians cross safely over a busy road
railway station|TRA|building|l|one|train station,rail station|building|lets passengers board and leave trains at its platforms
bus station|TRA|canopy|m|one|bus terminal,coach station|facility|is where city buses start and end their routes
parking lot|TRA|parking|l|few|car park,parking area|area|provides space for cars to stand while their drivers shop
toll station|TRA|canopy|m|one|toll plaza,toll booth|facility|collects fees from drivers entering the motorway
roundabout|TRA|roundabout|m|one|traffic circle,rotary|junction|lets traffic circulate around a central island at a junction
fighter jet|TRA|jet|s|few|fighter aircraft,military jet|vehicle|is flown by air force pilots on combat missions
canal lock|WAT|lock|m|one|navigation lock,lock chamber|structure|raises and lowers boats between different water levels
bell tower|PUB|tower|s|one|church tower,campanile|structure|houses large hanging bells used to call people to services
church|PUB|lbuilding|m|one|chapel,cathedral|building|hosts Christian worship services every Sunday morning
mosque|PUB|green_dome|m|one|masjid,domed mosque|building|hosts Muslim prayers beneath a large domed roof
temple|PUB|redroof|m|one|buddhist temple,shrine|building|is used for worship and offerings to the gods
pagoda|PUB|pagoda|s|one|stupa,tiered tower|structure|preserves sacred relics inside a tall tiered tower
cemetery|PUB|cemetery|l|one|graveyard,burial ground|area|is where the dead are buried in long rows of graves
school|PUB|lbuilding|l|one|school building,schoolhouse|building|is where children attend their lessons during the day
university|PUB|lbuilding|xl|one|campus,college|campus|provides higher education and research for students
hospital|PUB|lbuilding|l|one|medical center,general hospital|building|treats sick and injured patients around the clock
fire station|PUB|redroof|m|one|firehouse,fire brigade station|building|houses fire engines ready to respond to emergencies
police station|PUB|building|m|one|police headquarters,police precinct|building|is where officers are based and suspects are held
prison|PUB|lbuilding|xl|one|jail,correctional facility|facility|holds convicted criminals behind high security walls
town hall|PUB|building|m|one|city hall,municipal building|building|hosts the local government and its council meetings
library|PUB|building|m|one|public library,lending library|building|lends books and offers quiet space for reading
museum|PUB|building|m|one|art museum,gallery|building|displays collections of art and historical objects
observatory|PUB|dome|s|one|observatory dome,telescope dome|structure|houses a telescope for watching the night sky
radar dome|PUB|dome|s|few|radome,radar station|structure|protects a radar antenna from wind and weather
kindergarten|PUB|lbuilding|m|one|nursery school,preschool|building|looks after young children while their parents are at work
watchtower|PUB|tower|xs|few|guard tower,lookout tower|structure|gives guards a high view over the surrounding area
monument|PUB|tower|xs|one|memorial,statue plinth|structure|commemorates an important person or a historical event
castle|PUB|lbuilding|l|one|fortress,citadel|building|once defended the town with thick stone walls
residential building|BSR|building|m|many|apartment block,housing block|building|provides homes for many families in stacked flats
detached house|BSR|house|s|many|house,single-family home|building|is the home of a single family with its own garden
villa|BSR|lbuilding|m|few|mansion,luxury house|building|is a large private residence with spacious grounds
shopping mall|BSR|lbuilding|xl|one|shopping center,mall|building|gathers many retail shops under one large roof
supermarket|BSR|building|l|one|grocery store,hypermarket|building|sells food and household goods to local shoppers
hotel|BSR|lbuilding|l|one|resort hotel,inn|building|offers rooms for travellers to stay overnight
office building|BSR|tall|m|few|office tower,office block|building|provides workspace for companies and their employees
skyscraper|BSR|tall|m|few|high-rise,tower block|building|rises many storeys above the rest of the city skyline
market|BSR|long_shed|m|one|open-air market,bazaar|place|lets traders sell produce from long rows of stalls
tent|BSR|tent|xs|many|camping tent,dome tent|shelter|gives campers temporary shelter for the night
mobile home|BSR|mobile_home|s|many|caravan,trailer home|dwelling|is a movable home parked on a small plot
garden shed|BSR|shed|xs|many|shed,tool shed|building|stores garden tools in the back of a house
data center|BSR|building|l|one|server farm,data centre|building|houses thousands of computer servers with heavy cooling
parking garage|TRA|building|m|one|multi-storey car park,parking structure|building|stacks parked cars on several levels above the street
tennis court|SPL|court|s|many|tennis courts,hard court|court|is marked out with white lines for playing tennis matches
basketball court|SPL|court|s|few|basketball pitch,outdoor basketball court|court|is used for playing basketball between two hoops
volleyball court|SPL|court|xs|few|volleyball pitch,volleyball field|court|has a net across the middle for volleyball games
badminton court|SPL|court|xs|few|shuttlecock court,badminton field|court|is marked out for badminton played with a shuttlecock
beach volleyball court|SPL|court_sand|xs|few|sand volleyball court,beach court|court|lets people play volleyball barefoot on soft sand
soccer field|SPL|pitch|l|few|football pitch,soccer pitch|field|hosts football matches between two teams of eleven
baseball diamond|SPL|fan|l|few|baseball field,ballpark|field|is laid out for baseball with bases and an outfield
running track|SPL|track|l|one|athletics track,oval track|track|lets athletes race around its marked lanes
stadium|SPL|track|xl|one|sports stadium,sports arena|venue|seats thousands of spectators around a playing field
golf course|SPL|blob_green|xl|one|golf links,golf club|course|lets players hit balls over fairways towards the holes
swimming pool|SPL|pool|xs|many|pool,outdoor pool|pool|is filled with clean water for people to swim in
water park|SPL|blob_bright|l|one|aquapark,waterpark|park|entertains visitors with water slides and wave pools
playground|SPL|playground|s|few|children's playground,play area|area|has swings and slides where children can play
ice rink|SPL|court_ice|m|one|skating rink,ice arena|rink|is frozen over for ice skating and hockey
equestrian arena|SPL|arena|m|one|horse arena,riding arena|arena|is used to train and show horses on soft sand
racecourse|SPL|track_brown|xl|one|horse racetrack,hippodrome|track|hosts horse races around a long oval course
karting track|SPL|track_grey|l|one|go-kart track,kart circuit|track|lets small racing karts drive around tight bends
amphitheatre|SPL|fan_grey|m|one|open-air theatre,amphitheater|venue|seats an audience in curved rows around an open stage
ferris wheel|SPL|wheel|s|one|observation wheel,big wheel|ride|lifts riders high up in cabins around a giant wheel
cricket ground|SPL|pivot|l|one|cricket field,cricket oval|field|is used for cricket matches around a central pitch
rugby field|SPL|pitch|l|one|rugby pitch,rugby ground|field|hosts rugby matches with H-shaped posts at each end
sports hall|SPL|building|m|one|gymnasium,indoor arena|building|hosts indoor sports such as basketball and handball
gazebo|SPL|umbrella|xs|few|pavilion,garden pavilion|structure|gives visitors shade and shelter in a park
fountain|SPL|round_water|xs|few|water fountain,ornamental fountain|feature|sprays water into the air to decorate a public square
beach umbrella|SPL|umbrella|xs|many|parasol,sun umbrella|object|shades people lying on the sand from the sun
greenhouse|AGR|greenhouse|s|many|glasshouse,plastic greenhouse|building|grows vegetables under glass or plastic all year round
center pivot field|AGR|pivot|l|few|pivot irrigation field,crop circle|field|is watered by a long sprinkler arm rotating around its centre
barn|AGR|barn|s|few|farm barn,hay barn|building|stores hay and shelters animals on a farm
poultry house|AGR|long_shed|m|many|chicken house,broiler shed|building|raises large numbers of chickens for eggs or meat
feedlot|AGR|feedlot|l|one|cattle feedlot,cattle pen|enclosure|fattens cattle in crowded pens before they are sold
fish pond|AGR|pond|m|many|aquaculture pond,fishpond|pond|raises fish for food in shallow managed water
hay bale|AGR|hay|xs|many|round bale,straw bale|object|stores dried grass as winter feed for livestock
farm pond|AGR|blob_water|s|one|dugout pond,irrigation pond|pond|stores rainwater to irrigate the crops in dry months
dairy barn|AGR|long_shed|m|few|cow barn,cowshed|building|houses dairy cows for feeding and twice daily milking
pig farm|AGR|long_shed|m|few|piggery,hog barn|building|raises pigs indoors in long ventilated sheds
isolated tree|AGR|tree|xs|many|single tree,tree crown|plant|gives shade and shelter standing alone in the open
palm tree|AGR|palm|xs|many|palm,date palm|plant|grows in warm climates with fronds spreading from one trunk
breakwater|WAT|dam|l|one|sea wall,harbour wall|structure|shields a harbour from the full force of the waves
aquaculture cage|WAT|cage|xs|many|fish cage,net pen|structure|holds farmed fish in floating nets offshore
pond|WAT|blob_water|m|one|small pond,garden pond|water body|collects still water in a small natural hollow
lake|WAT|blob_water|xl|one|natural lake,freshwater lake|water body|holds a large body of fresh water far inland
cropland|AGR|area_field|xl|area|farmland,arable land|land|is ploughed and sown each year to grow food crops
road section|TRA|area_road|xl|area|road,roadway|surface|carries cars and trucks between towns and villages
railway section|TRA|area_rail|xl|area|railway,rail track|track|carries trains on steel rails between distant stations
river|WAT|area_river|xl|area|stream,river channel|water body|carries fresh water downhill towards the sea
canal|WAT|area_canal|xl|area|irrigation canal,waterway|channel|carries water along a straight artificial channel
woodland|NAT|area_forest|xl|area|forest,woods|land|is densely covered with trees and thick undergrowth
grassland|NAT|area_grass|xl|area|meadow,pasture|land|is covered with grass that animals can graze on
bare land|NAT|area_soil|xl|area|bare soil,barren land|land|has no vegetation or buildings covering the soil
paddy field|AGR|area_paddy|xl|area|rice paddy,rice field|field|is flooded with shallow water to grow rice
orchard|AGR|area_orchard|xl|area|fruit orchard,fruit trees|land|grows fruit trees planted in long regular rows
wetland|NAT|area_wetland|xl|area|marsh,swamp|land|is waterlogged and covered with reeds and marsh plants
sand beach|WAT|area_beach|xl|area|beach,sandy shore|shore|lies between the sea and the land and is covered in sand
"""

# Categories that the scenery itself may show (background houses, trees, roads, fields), so
# they are never offered as a negative phrase for an image.
SCENERY = frozenset({
    "detached house", "residential building", "garden shed", "isolated tree", "warehouse",
    "factory", "office building", "car", "truck", "villa",
})


@dataclass(frozen=True)
class Category:
    """One taxonomy category.

    Attributes:
        name: canonical name (the ground truth's ``category_name``).
        group: taxonomy group name (a value of :data:`GROUPS`).
        style: drawing archetype, a key of :data:`STYLES`.
        size: size class, a key of :data:`SIZE_PX`.
        multiplicity: ``one``, ``few``, ``many`` or ``area`` (non-instanceable).
        synonyms: open-vocabulary paraphrases.
        kind: generic noun for reasoning queries.
        function: verb phrase describing what the object is for.
    """

    name: str
    group: str
    style: str
    size: str
    multiplicity: str
    synonyms: tuple[str, ...]
    kind: str
    function: str

    @property
    def is_area(self) -> bool:
        """True for area-type and linear (non-instanceable) categories."""
        return self.multiplicity == "area"


def _parse(table: str) -> tuple[Category, ...]:
    rows = []
    for line in table.strip().splitlines():
        name, group, style, size, mult, syn, kind, func = (f.strip() for f in line.split("|"))
        rows.append(Category(name, GROUPS[group], style, size, mult,
                             tuple(s.strip() for s in syn.split(",")), kind, func))
    return tuple(rows)


CATEGORIES: tuple[Category, ...] = _parse(_TABLE)
BY_NAME: dict[str, Category] = {c.name: c for c in CATEGORIES}
