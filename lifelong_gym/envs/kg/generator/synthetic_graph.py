"""A seeded, Freebase-shaped graph over several domains, with realistic fake names."""

from __future__ import annotations

import datetime as dt
import gzip
import random
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from lifelong_gym.envs.kg.sparql import NS, TYPE_RELATION, XSD
from lifelong_gym.generation import replacing

NAME_RELATION = "type.object.name"
_MID_CHARS = "0123456789bcdfghjklmnpqrstvwxyz_"

# class -> (how many at scale 1.0, name kind)
CLASSES: dict[str, tuple[int, str]] = {
    "location.country": (45, "country"),
    "location.citytown": (450, "city"),
    "people.person": (3200, "person"),
    "people.profession": (18, "profession"),
    "language.human_language": (20, "language"),
    "film.film": (1700, "title"),
    "film.film_genre": (16, "film_genre"),
    "music.album": (1000, "title"),
    "music.genre": (14, "music_genre"),
    "business.company": (600, "company"),
    "business.industry": (18, "industry"),
    "sports.sports_team": (120, "team"),
    "sports.sport": (8, "sport"),
    "education.university": (160, "university"),
}

# relation, subject class, object class, objects per subject (min max), reverse relation
_RELATION_TABLE = """
location.location.containedby location.citytown location.country 1 1 location.location.contains
location.country.capital location.country location.citytown 1 1 location.citytown.capital_of
location.country.official_language location.country language.human_language 1 2 \
language.human_language.countries_spoken_in
people.person.nationality people.person location.country 1 1 location.country.nationals
people.person.place_of_birth people.person location.citytown 1 1 \
location.location.people_born_here
people.person.profession people.person people.profession 1 2 \
people.profession.people_with_this_profession
people.person.education people.person education.university 0 1 \
education.educational_institution.alumni
film.film.directed_by film.film people.person 1 1 film.director.film
film.film.starring film.film people.person 2 4 film.actor.film
film.film.genre film.film film.film_genre 1 2 film.film_genre.films_in_this_genre
film.film.country film.film location.country 1 1 location.country.films
film.film.language film.film language.human_language 1 1 language.human_language.films
music.album.artist music.album people.person 1 1 music.artist.album
music.album.genre music.album music.genre 1 1 music.genre.albums
business.company.headquarters business.company location.citytown 1 1 \
location.location.companies_headquartered_here
business.company.industry business.company business.industry 1 1 business.industry.companies
business.company.founders business.company people.person 1 2 \
organization.organization_founder.organizations_founded
sports.sports_team.location sports.sports_team location.citytown 1 1 \
sports.sports_team_location.teams
sports.sports_team.sport sports.sports_team sports.sport 1 1 sports.sport.teams
sports.sports_team.players sports.sports_team people.person 6 12 sports.pro_athlete.teams
education.university.city education.university location.citytown 1 1 \
location.location.universities
"""
# relation -> (subject class, object class, (min, max) objects per subject, reverse relation)
RELATIONS: dict[str, tuple[str, str, tuple[int, int], str]] = {
    name: (subject, obj, (int(low), int(high)), reverse)
    for name, subject, obj, low, high, reverse in (
        line.split() for line in _RELATION_TABLE.strip().splitlines()
    )
}

# attribute -> (classes, kind, low, high)
ATTRIBUTES: dict[str, tuple[tuple[str, ...], str, float, float]] = {
    "people.person.date_of_birth": (("people.person",), "date", 1920, 2004),
    "people.person.height_meters": (("people.person",), "decimal", 1.5, 2.05),
    "film.film.initial_release_date": (("film.film",), "date", 1950, 2024),
    "film.film.runtime": (("film.film",), "integer", 75, 190),
    "film.film.estimated_budget": (("film.film",), "integer", 200_000, 250_000_000),
    "music.album.release_date": (("music.album",), "date", 1960, 2024),
    "music.album.track_count": (("music.album",), "integer", 6, 24),
    "business.company.founded": (("business.company",), "date", 1850, 2020),
    "business.company.num_employees": (("business.company",), "integer", 5, 400_000),
    "sports.sports_team.founded": (("sports.sports_team",), "date", 1870, 2015),
    "education.university.founded": (("education.university",), "date", 1200, 2000),
    "education.university.number_of_students": (("education.university",), "integer", 800, 90_000),
    "location.statistical_region.population": (
        ("location.country", "location.citytown"),
        "integer",
        5_000,
        90_000_000,
    ),
    "location.location.area": (("location.country", "location.citytown"), "decimal", 10, 900_000),
}

WORDS = {
    "profession": "Actor Film director Singer Songwriter Footballer Engineer Physician Lawyer "
    "Journalist Entrepreneur Architect Painter Novelist Economist Chemist Teacher Politician",
    "language": "English French German Spanish Italian Portuguese Dutch Swedish Polish Greek "
    "Turkish Arabic Hindi Japanese Korean Mandarin Russian Czech Finnish Hungarian",
    "film_genre": "Drama Comedy Thriller Horror Romance Documentary Western Musical Animation "
    "Adventure Crime Fantasy Mystery War Biography Science_fiction",
    "music_genre": "Jazz Blues Rock Pop Folk Reggae Techno House Hip_hop Soul Funk Country "
    "Classical Punk",
    "industry": "Banking Insurance Retail Aerospace Biotechnology Software Mining Shipping "
    "Publishing Telecommunications Automotive Textiles Brewing Tourism Pharmaceuticals "
    "Construction Agriculture Energy",
    "sport": "Football Basketball Ice_hockey Baseball Rugby Volleyball Handball Cricket",
    "team_suffix": "Rovers Lions Falcons Wanderers United Comets Hawks Rangers Athletic Bears "
    "Titans Harriers Pirates Royals",
}
# it_IT is left out: its city names depend on hash order, so output would vary per run.
LOCALES = ["en_US", "en_GB", "de_DE", "fr_FR", "es_ES", "nl_NL", "pt_BR", "sv_SE"]


@dataclass
class Graph:
    """The generated graph: names, classes, entity edges and attribute values."""

    names: dict[str, str] = field(default_factory=dict)
    classes: dict[str, str] = field(default_factory=dict)
    edges: list[tuple[str, str, str]] = field(default_factory=list)
    attributes: dict[str, dict[str, tuple[str, str]]] = field(
        default_factory=lambda: defaultdict(dict)
    )

    def by_class(self) -> dict[str, list[str]]:
        """The entity ids of each class, in creation order."""
        groups: dict[str, list[str]] = defaultdict(list)
        for mid, cls in self.classes.items():
            groups[cls].append(mid)
        return groups

    def triple_lines(self) -> list[str]:
        """The graph as N-Triples lines."""
        lines = []
        for mid, name in self.names.items():
            lines.append(f'<{NS}{mid}> <{NS}{NAME_RELATION}> "{_escape(name)}"@en .')
            lines.append(f"<{NS}{mid}> <{NS}{TYPE_RELATION}> <{NS}{self.classes[mid]}> .")
        lines += [f"<{NS}{s}> <{NS}{r}> <{NS}{o}> ." for s, r, o in self.edges]
        for mid, values in self.attributes.items():
            for attr, (value, kind) in values.items():
                lines.append(f'<{NS}{mid}> <{NS}{attr}> "{value}"^^<{XSD}{kind}> .')
        return lines


def build_graph(seed: int, scale: float = 1.0) -> Graph:
    """A graph with the same content for the same seed, scale and Faker version."""
    from faker import Faker

    rng = random.Random(seed)
    fake = Faker(LOCALES)
    fake.seed_instance(seed)
    graph = Graph()
    mids: set[str] = set()
    for cls, (size, kind) in CLASSES.items():
        count = len(WORDS[kind].split()) if kind in WORDS else max(2, round(size * scale))
        for i in range(count):
            mid = _new_mid(rng, mids)
            graph.names[mid] = _name(kind, i, fake, rng)
            graph.classes[mid] = cls
    groups = graph.by_class()
    for relation, (subject_cls, object_cls, (low, high), reverse) in RELATIONS.items():
        objects = groups[object_cls]
        weights = _popularity(len(objects), rng)
        for subject in groups[subject_cls]:
            picks = set(rng.choices(objects, weights, k=rng.randint(low, high)))
            for obj in sorted(picks):
                graph.edges.append((subject, relation, obj))
                graph.edges.append((obj, reverse, subject))
    for attr, (classes, kind, low, high) in ATTRIBUTES.items():
        for cls in classes:
            for mid in groups[cls]:
                if rng.random() < 0.9:
                    graph.attributes[mid][attr] = (_value(kind, low, high, rng), kind)
    return graph


def ntriples(graph: Graph) -> bytes:
    """The graph as N-Triples (equal graphs, equal bytes)."""
    return ("\n".join(graph.triple_lines()) + "\n").encode("utf-8")


def write_ntriples(data: bytes, path: Path) -> None:
    """Write N-Triples gzip-compressed, atomically (equal data, equal bytes)."""
    with (
        replacing(path) as temporary,
        temporary.open("wb") as raw,
        # the header names the final file, not the temporary one
        gzip.GzipFile(filename=path.name, mode="wb", fileobj=raw, mtime=0) as handle,
    ):
        handle.write(data)


def _popularity(size: int, rng: random.Random) -> list[float]:
    # A few popular targets and a long tail, as in real graphs.
    return [1.0 / (1 + rank) ** 0.6 for rank in rng.sample(range(size), size)]


def _new_mid(rng: random.Random, taken: set[str]) -> str:
    while True:
        mid = "m.0" + "".join(rng.choice(_MID_CHARS) for _ in range(rng.randint(4, 6)))
        if mid not in taken:
            taken.add(mid)
            return mid


def _name(kind: str, i: int, fake, rng: random.Random) -> str:
    if kind in WORDS:
        return WORDS[kind].split()[i].replace("_", " ")
    if kind == "country":
        return fake["en_US"].unique.country()
    if kind == "city":
        return fake.city()
    if kind == "person":
        return fake.name()
    if kind == "company":
        return fake.company()
    if kind == "team":
        return f"{fake.city()} {rng.choice(WORDS['team_suffix'].split())}"
    if kind == "university":
        return rng.choice(["University of {}", "{} Institute of Technology", "{} College"]).format(
            fake.city()
        )
    words = fake["en_US"].words(rng.randint(1, 3))
    return " ".join(w.capitalize() for w in words)


def _value(kind: str, low: float, high: float, rng: random.Random) -> str:
    if kind == "date":
        start = dt.date(int(low), 1, 1).toordinal()
        return dt.date.fromordinal(
            rng.randint(start, dt.date(int(high), 12, 31).toordinal())
        ).isoformat()
    if kind == "integer":
        return str(rng.randint(int(low), int(high)))
    return f"{rng.uniform(low, high):.2f}"


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')
